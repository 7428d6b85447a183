import { NodeHttpServer } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { HttpRouter, HttpServer } from "effect/http"
import * as Fs from "node:fs"
import { createServer } from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as ClientErrors from "../../src/http/ClientErrors.ts"
import * as GatewayLogger from "../../src/observability/GatewayLogger.ts"
import { Routes } from "../../src/Server.ts"

export interface RunningServer {
  readonly baseUrl: string
  readonly origin: string
  readonly managementKey: string
  readonly apiKey: string
  readonly dataDir: string
  readonly close: () => Promise<void>
  /** Runs an effect against the server's own store (the same SQL client its handlers use). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>
}

/**
 * Which store a test suite runs on: SQLite in a fresh data directory (removed when the server
 * closes) by default; PostgreSQL when `SWITCHYARD_TEST_STORE=postgres` (then `DATABASE_URL`,
 * default the machine's `test` database), in a fresh database per server so suites never see each
 * other's rows.
 */
export const storeKind: "sqlite" | "postgres" = process.env.SWITCHYARD_TEST_STORE === "postgres" ? "postgres" : "sqlite"

export const postgresUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

/**
 * Whether PostgreSQL at {@link postgresUrl} accepts a TCP connection within 2 s: the suites that
 * need it skip without it, except under CI, where its absence is a failure.
 */
export const postgresReachable = (): Promise<boolean> =>
  new Promise<boolean>((resolve) => {
    const url = new URL(postgresUrl)
    const socket = Net.connect(Number(url.port || 5432), url.hostname)
    socket.setTimeout(2000)
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
    socket.once("timeout", () => {
      socket.destroy()
      resolve(false)
    })
  })

/** Every temporary directory this test process made: removed when it exits, whatever a test did with it. */
const made = new Set<string>()
process.once("exit", () => {
  for (const dir of made) {
    try {
      Fs.rmSync(dir, { recursive: true, force: true })
    } catch {
      // A directory still mounted over (the full-disk test's tmpfs, when it could not unmount) stays.
    }
  }
})

export const tempDir = (prefix: string) => {
  const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), `switchyard-${prefix}-`))
  made.add(dir)
  return dir
}

/**
 * Starts the real gateway on 127.0.0.1 (a free port) with its own store and known bootstrap keys.
 */
export const startServer = async (options: {
  readonly env?: Record<string, string>
  readonly dataDir?: string
  readonly databaseUrl?: string
} = {}): Promise<RunningServer> => {
  const dataDir = options.dataDir ?? tempDir("data")
  const databaseUrl = options.databaseUrl ?? (storeKind === "postgres" ? await freshDatabase() : undefined)
  const managementKey = options.env?.SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY ?? KeySecret.generate()
  const apiKey = options.env?.SWITCHYARD_BOOTSTRAP_API_KEY ?? KeySecret.generate()
  const env: Record<string, string> = {
    SWITCHYARD_DATA_DIR: dataDir,
    SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
    SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
    // Required with DATABASE_URL; the global setup gives the run one key.
    ...(databaseUrl !== undefined ? { DATABASE_URL: databaseUrl, SWITCHYARD_SECRET_KEY: process.env.SWITCHYARD_SECRET_KEY ?? "" } : {}),
    // The access line of every request would bury the test report: errors only, unless asked.
    SWITCHYARD_LOG_LEVEL: process.env.SWITCHYARD_LOG_LEVEL ?? "error",
    ...options.env
  }
  const scope = Effect.runSync(Scope.make())
  const config: Layer.Layer<never> = ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))
  const layer = HttpRouter.serve(Routes, { disableLogger: true }).pipe(
    // Node's parser refusals and CONNECT answered as the gateway's own listener answers them.
    Layer.provideMerge(NodeHttpServer.layer(() => ClientErrors.install(createServer()), { host: "127.0.0.1", port: 0 })),
    Layer.provide(GatewayLogger.layer),
    Layer.provide(config)
  )
  const close = async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    if (databaseUrl !== undefined && options.databaseUrl === undefined) await dropDatabase(databaseUrl)
    // A data directory this call made goes with the server; one the test gave stays for it.
    if (options.dataDir === undefined) Fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 3 })
  }
  // A start that fails (a test of a refused configuration) leaves no database or directory behind.
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope)).catch(async (error: unknown) => {
    await close()
    throw error
  })
  const address = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
  return {
    origin: address,
    baseUrl: `${address}/api/v1`,
    managementKey,
    apiKey,
    dataDir,
    run: (effect) => Effect.runPromise(Effect.provideService(effect, SqlClient.SqlClient, Context.get(context, SqlClient.SqlClient))),
    close
  }
}

const onMaintenance = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* f(yield* SqlClient.SqlClient)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(postgresUrl), maxConnections: 1 })))
  )

/**
 * One JSON call to the server's API with a bearer key; the status and the parsed body.
 */
export const call = async (server: RunningServer, method: string, path: string, key: string, body?: unknown) => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: await response.json() as any }
}

/**
 * A new, empty PostgreSQL database on the server of `DATABASE_URL`; its URL.
 */
export const freshDatabase = async (): Promise<string> => {
  // The run's mark first: the global teardown finds what a run left behind by it.
  const run = process.env.SWITCHYARD_TEST_RUN ?? "adhoc"
  const name = `switchyard_test_${run}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await onMaintenance((sql) => sql.unsafe(`CREATE DATABASE ${name}`))
  const url = new URL(postgresUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export const dropDatabase = (url: string) =>
  onMaintenance((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`))
