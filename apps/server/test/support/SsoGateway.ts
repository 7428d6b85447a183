/**
 * The gateway with single sign-on against the test identity provider (IdentityProvider.ts), both on
 * 127.0.0.1: three people in three groups (admins, finance viewers, search members) and one in no
 * mapped group. The gateway runs on a test clock a test moves (`adjust`), and everything it writes
 * to standard output and error is kept (`output`) so a test can look for secrets in it.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { ConfigProvider, type Duration, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter } from "effect/http"
import { TestClock } from "effect/testing"
import * as Fs from "node:fs"
import { createServer } from "node:http"
import * as Net from "node:net"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as ClientErrors from "../../src/http/ClientErrors.ts"
import * as GatewayLogger from "../../src/observability/GatewayLogger.ts"
import { SessionClock } from "../../src/http/SingleSignOn.ts"
import { Routes } from "../../src/Server.ts"
import { type RunningIdentityProvider, startIdentityProvider } from "./IdentityProvider.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "./TestServer.ts"

export const clientSecret = "client-secret-that-must-never-show"

export const people = {
  ada: { sub: "ada", email: "ada@example.com", name: "Ada Admin", password: "pw-ada", groups: ["platform-admins"] },
  fin: { sub: "fin", email: "fin@example.com", name: "Fin Viewer", password: "pw-fin", groups: ["finance"] },
  sam: { sub: "sam", email: "sam@example.com", name: "Sam Member", password: "pw-sam", groups: ["search"] },
  nob: { sub: "nob", email: "nob@example.com", name: "No Body", password: "pw-nob", groups: ["elsewhere"] },
  out: { sub: "out", email: "out@other.org", name: "Out Sider", password: "pw-out", groups: ["platform-admins"] }
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

export interface SsoGateway {
  readonly origin: string
  readonly managementKey: string
  readonly idp: RunningIdentityProvider
  /** Moves the gateway's clock. */
  readonly adjust: (duration: Duration.Input) => Promise<void>
  /** Everything written to stdout and stderr since start. */
  readonly output: () => string
  readonly close: () => Promise<void>
}

/** Starts the IdP and a gateway signing in through it; `workspaces` maps a slug to its groups. */
export const startSsoGateway = async (options: {
  readonly databaseUrl?: string
  readonly idp?: RunningIdentityProvider
  readonly keySignIn?: boolean
  readonly authorizationParams?: Record<string, string>
  readonly refreshTokens?: boolean
  /** More settings of the gateway (`SWITCHYARD_CONSOLE_DIR`...), over the ones given here. */
  readonly env?: Record<string, string>
} = {}): Promise<SsoGateway> => {
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const idp = options.idp ?? (await startIdentityProvider({
    users: Object.values(people),
    client: {
      client_id: "switchyard",
      client_secret: clientSecret,
      redirect_uris: [`${origin}/ui/auth/callback`],
      post_logout_redirect_uris: [`${origin}/ui/`]
    },
    ...(options.refreshTokens === undefined ? {} : { refreshTokens: options.refreshTokens })
  }))
  const dir = tempDir("sso")
  const configPath = NodePath.join(dir, "switchyard.json")
  Fs.writeFileSync(configPath, JSON.stringify({
    sso: {
      issuer: idp.issuer,
      client_id: "switchyard",
      client_secret_env: "TEST_OIDC_SECRET",
      allowed_domains: ["example.com"],
      roles: { admin: ["platform-admins"], viewer: ["finance"] },
      workspace_roles: { default: { member: ["search"] } },
      ...(options.keySignIn === undefined ? {} : { key_sign_in: options.keySignIn }),
      ...(options.authorizationParams === undefined ? {} : { authorization_params: options.authorizationParams })
    }
  }))
  const databaseUrl = options.databaseUrl ?? (storeKind === "postgres" ? await freshDatabase() : undefined)
  const managementKey = KeySecret.generate()
  const env: Record<string, string> = {
    SWITCHYARD_CONFIG: configPath,
    SWITCHYARD_PUBLIC_URL: origin,
    TEST_OIDC_SECRET: clientSecret,
    SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
    SWITCHYARD_BOOTSTRAP_API_KEY: KeySecret.generate(),
    SWITCHYARD_RATE_LIMIT: "off",
    SWITCHYARD_LOG_LEVEL: "debug",
    ...(databaseUrl === undefined
      ? { SWITCHYARD_DATA_DIR: NodePath.join(dir, "data") }
      : { DATABASE_URL: databaseUrl, SWITCHYARD_SECRET_KEY: process.env.SWITCHYARD_SECRET_KEY || "c".repeat(64) }),
    ...options.env
  }
  const written: Array<string> = []
  const stdout = process.stdout.write
  const stderr = process.stderr.write
  const keep = (chunk: string | Uint8Array) => {
    written.push(String(chunk))
    return true
  }
  process.stdout.write = keep as typeof process.stdout.write
  process.stderr.write = keep as typeof process.stderr.write
  const scope = Effect.runSync(Scope.make())
  const clock = await Effect.runPromise(Scope.provide(scope)(TestClock.make()))
  await Effect.runPromise(clock.setTime(Date.now()))
  const layer = HttpRouter.serve(Routes, { disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => ClientErrors.install(createServer()), { host: "127.0.0.1", port })),
    Layer.provide(GatewayLogger.layer),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))),
    Layer.provide(Layer.succeed(SessionClock, clock))
  )
  const restore = () => {
    process.stdout.write = stdout
    process.stderr.write = stderr
  }
  await Effect.runPromise(Layer.buildWithScope(layer, scope)).catch((error: unknown) => {
    restore()
    throw error
  })
  return {
    origin,
    managementKey,
    idp,
    adjust: (duration) => Effect.runPromise(clock.adjust(duration)),
    output: () => written.join(""),
    close: async () => {
      restore()
      await Effect.runPromise(Scope.close(scope, Exit.void))
      if (options.idp === undefined) await idp.close()
      if (databaseUrl !== undefined && options.databaseUrl === undefined) await dropDatabase(databaseUrl)
    }
  }
}
