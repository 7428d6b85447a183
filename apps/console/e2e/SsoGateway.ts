import { Switchyard } from "@switchyard/client/Switchyard"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import * as FakeOpenAi from "../../server/test/fakes/FakeOpenAi.ts"
import { type IdentityUser, type RunningIdentityProvider, startIdentityProvider } from "../../server/test/support/IdentityProvider.ts"
import { freePort, type ServerProcess, startServerProcess } from "../../server/test/support/ServerProcess.ts"
import * as KeySecret from "../../server/src/auth/KeySecret.ts"

/**
 * The gateway as `pnpm start` runs it, with single sign-on through a real OpenID provider
 * (`oidc-provider` on 127.0.0.1, its own login page) whose people are in the groups the config
 * maps to roles: an instance admin, a viewer, a member of the workspace `search`, and one in no
 * mapped group.
 */
export interface SsoGateway {
  readonly origin: string
  readonly admin: Switchyard
  readonly idp: RunningIdentityProvider
  /** The workspace `search`, whose members are the group `search`. */
  readonly searchWorkspaceId: string
  /** The client secret the gateway shares with the identity provider (never to be seen in a page). */
  readonly clientSecret: string
  /** The gateway's log and error output so far. */
  readonly output: () => string
  readonly close: () => Promise<void>
}

const person = (sub: string, name: string, groups: ReadonlyArray<string>): IdentityUser => ({
  sub,
  email: `${sub}@example.com`,
  name,
  password: `${sub}-password`,
  groups
})

export const people = {
  admin: person("alice", "Alice Admin", ["platform-admins"]),
  viewer: person("victor", "Victor Viewer", ["finance"]),
  member: person("mia", "Mia Member", ["search"]),
  nobody: person("nolan", "Nolan Nogroup", ["marketing"])
} as const

const consoleDir = NodePath.join(import.meta.dirname, "..", "dist")

const providers = (url: string) => [{
  slug: "alpha",
  name: "Alpha Cloud",
  adapter: "openai",
  base_url: url,
  api_key_env: "ALPHA_API_KEY",
  data_collection: "deny",
  zdr: true,
  endpoints: [{
    model: "acme/embed",
    upstream_model: "embed",
    pricing: { prompt: "0.10", request: "0", image: "0", audio: "0" },
    quantization: "fp16",
    dimensions: 16,
    supported_parameters: ["dimensions", "encoding_format"],
    max_batch_items: 64
  }]
}]

const sso = (issuer: string, searchWorkspaceId: string) => ({
  issuer,
  client_id: "switchyard",
  client_secret_env: "SWITCHYARD_OIDC_CLIENT_SECRET",
  scopes: ["openid", "email", "profile", "offline_access"],
  groups_claim: "groups",
  allowed_domains: ["example.com"],
  roles: { admin: ["platform-admins"], viewer: ["finance"] },
  workspace_roles: { [searchWorkspaceId]: { admin: ["search-leads"], member: ["search"] } },
  key_sign_in: false
})

/**
 * Starts the identity provider, then the gateway twice on one port and one data directory: first
 * without single sign-on, to create the workspace `search` (whose id the config's
 * `workspace_roles` names) and a key in it; then with the `sso` section.
 */
export const start = async (): Promise<SsoGateway> => {
  if (!Fs.existsSync(NodePath.join(consoleDir, "index.html"))) {
    throw new Error(`The console is not built (${consoleDir}): run \`pnpm --filter @switchyard/console build\` first`)
  }
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const clientSecret = Crypto.randomBytes(24).toString("base64url")
  const idp = await startIdentityProvider({
    users: Object.values(people),
    client: {
      client_id: "switchyard",
      client_secret: clientSecret,
      redirect_uris: [`${origin}/ui/auth/callback`],
      post_logout_redirect_uris: [`${origin}/ui/`]
    }
  })
  const upstream = await FakeOpenAi.start()
  const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-console-sso-"))
  const configPath = NodePath.join(dir, "switchyard.json")
  const managementKey = KeySecret.generate()
  const env = {
    SWITCHYARD_PORT: String(port),
    SWITCHYARD_DATA_DIR: NodePath.join(dir, "data"),
    SWITCHYARD_CONFIG: configPath,
    SWITCHYARD_CONSOLE_DIR: consoleDir,
    SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
    SWITCHYARD_BOOTSTRAP_API_KEY: KeySecret.generate(),
    SWITCHYARD_RATE_LIMIT: "off",
    SWITCHYARD_PUBLIC_URL: origin,
    SWITCHYARD_OIDC_CLIENT_SECRET: clientSecret,
    ALPHA_API_KEY: "sk-fake"
  }
  let server: ServerProcess | undefined
  let admin: Switchyard | undefined
  const close = async () => {
    await admin?.close()
    await server?.stop()
    await upstream.close()
    await idp.close()
    Fs.rmSync(dir, { recursive: true, force: true })
  }
  try {
    Fs.writeFileSync(configPath, JSON.stringify({ providers: providers(upstream.url) }, null, 2))
    server = await startServerProcess(env, 300_000)
    const first = new Switchyard({ baseUrl: origin, apiKey: managementKey, retry: false })
    const { data: search } = await first.workspaces.create({ payload: { name: "Search", slug: "search" } })
    await first.keys.create({ payload: { name: "search-shared", workspace_id: search.id } })
    await first.close()
    await server.stop()
    Fs.writeFileSync(configPath, JSON.stringify({ providers: providers(upstream.url), sso: sso(idp.issuer, search.id) }, null, 2))
    server = await startServerProcess(env, 300_000)
    admin = new Switchyard({ baseUrl: origin, apiKey: managementKey, retry: false })
    const running = server
    return { origin, admin, idp, searchWorkspaceId: search.id, clientSecret, output: () => running.output(), close }
  } catch (error) {
    const output = server?.output() ?? ""
    await close()
    throw new Error(`${String(error)}\n${output}`)
  }
}
