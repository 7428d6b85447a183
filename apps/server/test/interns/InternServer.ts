import { NodeHttpServer } from "@effect/platform-node"
import { ConfigProvider, Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Crypto from "node:crypto"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as GatewayLogger from "../../src/observability/GatewayLogger.ts"
import { Routes } from "../../src/Server.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

export interface InternServer {
  readonly origin: string
  readonly baseUrl: string
  readonly apiKey: string
  readonly managementKey: string
  readonly dataDir: string
  readonly databaseUrl: string | undefined
  readonly sql: <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => Promise<A>
  readonly close: () => Promise<void>
}

/**
 * The real gateway on 127.0.0.1 with its own store, plus access to that store for arranging what
 * the API cannot create (a second workspace, a second user).
 */
export const startInternServer = async (options: {
  readonly env?: Record<string, string>
  readonly dataDir?: string
  readonly databaseUrl?: string
  readonly keys?: { readonly apiKey: string; readonly managementKey: string }
} = {}): Promise<InternServer> => {
  const dataDir = options.dataDir ?? tempDir("interns")
  const databaseUrl = options.databaseUrl ?? (storeKind === "postgres" ? await freshDatabase() : undefined)
  const apiKey = options.keys?.apiKey ?? KeySecret.generate()
  const managementKey = options.keys?.managementKey ?? KeySecret.generate()
  const env: Record<string, string> = {
    SWITCHYARD_DATA_DIR: dataDir,
    SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
    SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
    SWITCHYARD_RATE_LIMIT: "100000/60s",
    // Required with DATABASE_URL; the global setup gives the run one key.
    ...(databaseUrl !== undefined ? { DATABASE_URL: databaseUrl, SWITCHYARD_SECRET_KEY: process.env.SWITCHYARD_SECRET_KEY ?? "" } : {}),
    // The access line of every request would bury the test report: errors only, unless asked.
    SWITCHYARD_LOG_LEVEL: process.env.SWITCHYARD_LOG_LEVEL ?? "error",
    ...options.env
  }
  const scope = Effect.runSync(Scope.make())
  const layer = HttpRouter.serve(Routes, { disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(Http.createServer, { host: "127.0.0.1", port: 0 })),
    Layer.provide(GatewayLogger.layer),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const origin = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
  const client = Context.get(context, SqlClient.SqlClient)
  return {
    origin,
    baseUrl: `${origin}/api/v1`,
    apiKey,
    managementKey,
    dataDir,
    databaseUrl,
    sql: (f) => Effect.runPromise(f(client)),
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      if (options.dataDir === undefined) Fs.rmSync(dataDir, { recursive: true, force: true })
      if (databaseUrl !== undefined && options.databaseUrl === undefined) await dropDatabase(databaseUrl)
    }
  }
}

/**
 * A second user with a standard key, in the server's bootstrap workspace or in a new workspace.
 */
export const addUser = async (server: InternServer, options: { readonly ownWorkspace: boolean }) => {
  const key = KeySecret.generate()
  const userId = Crypto.randomUUID()
  await server.sql((sql) =>
    Effect.gen(function*() {
      const [bootstrap] = yield* sql<{ workspace_id: string }>`SELECT workspace_id FROM api_keys WHERE hash = ${KeySecret.hash(server.apiKey)}`
      let workspaceId = bootstrap!.workspace_id
      if (options.ownWorkspace) {
        workspaceId = Crypto.randomUUID()
        yield* sql`INSERT INTO workspaces (id, slug, name) VALUES (${workspaceId}, ${`ws-${workspaceId.slice(0, 8)}`}, 'Other')`
      }
      yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES (${userId}, ${`user-${userId.slice(0, 8)}`}, ${workspaceId})`
      yield* sql`INSERT INTO memberships (user_id, workspace_id, role) VALUES (${userId}, ${workspaceId}, 'member')`
      yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id)
        VALUES (${Crypto.randomUUID()}, ${KeySecret.hash(key)}, 'standard', 'second', ${key.slice(0, 12)}, ${userId}, ${workspaceId})`
    })
  )
  return { key, userId }
}

export const internDir = (server: InternServer, internId: string) => NodePath.join(server.dataDir, "interns", internId)

export const runtimeOf = (server: InternServer, internId: string) => {
  const file = NodePath.join(internDir(server, internId), "runtime.json")
  return Fs.existsSync(file) ? JSON.parse(Fs.readFileSync(file, "utf8")) as { pid: number; port: number; run_id: string } : undefined
}

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export interface Call {
  readonly status: number
  readonly body: any
}

export const call = async (
  server: InternServer,
  method: string,
  path: string,
  options: { readonly key?: string | null; readonly body?: unknown; readonly raw?: string; readonly headers?: Record<string, string> } = {}
): Promise<Call> => {
  const headers: Record<string, string> = { ...options.headers }
  const key = options.key === undefined ? server.apiKey : options.key
  if (key !== null) headers.authorization = `Bearer ${key}`
  let body: string | undefined
  if (options.raw !== undefined) body = options.raw
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers["content-type"] ??= "application/json"
  }
  const response = await fetch(`${server.baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) })
  const text = await response.text()
  return { status: response.status, body: text.length > 0 && text.startsWith("{") ? JSON.parse(text) : text }
}

/**
 * Polls an intern until `done` holds, recording every status and progress seen on the way.
 */
export const waitFor = async (
  server: InternServer,
  internId: string,
  done: (intern: any) => boolean,
  options: { readonly timeoutMs?: number; readonly seen?: Array<any> } = {}
) => {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000)
  for (;;) {
    const { status, body } = await call(server, "GET", `/interns/${internId}`)
    if (status !== 200) throw new Error(`GET /interns/${internId} answered ${status}: ${JSON.stringify(body)}`)
    options.seen?.push(body)
    if (done(body)) return body
    if (Date.now() > deadline) throw new Error(`Intern ${internId} stayed ${body.status}: ${JSON.stringify(body)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/**
 * A request through `node:http`, for what `fetch` will not send: a chosen `Host` header, a body
 * in chunks without `Content-Length`.
 */
export const rawRequest = (
  server: InternServer,
  options: {
    readonly method: string
    readonly path: string
    readonly headers?: Record<string, string>
    readonly chunks?: ReadonlyArray<string>
  }
) =>
  new Promise<Call>((resolve, reject) => {
    const url = new URL(`${server.baseUrl}${options.path}`)
    const request = Http.request({
      host: url.hostname,
      port: url.port,
      method: options.method,
      path: url.pathname + url.search,
      headers: { authorization: `Bearer ${server.apiKey}`, ...options.headers }
    }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        text += chunk
      })
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text.startsWith("{") ? JSON.parse(text) : text }))
    })
    request.on("error", reject)
    for (const chunk of options.chunks ?? []) request.write(chunk)
    request.end()
  })
