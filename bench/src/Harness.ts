import { validate } from "./Bench.ts"
import { cells, requestFor, width } from "./Cells.ts"
import * as PgDatabase from "./PgDatabase.ts"
import * as PgServer from "./PgServer.ts"
import { type Child, startUpstream, upstreamApiKey } from "./Processes.ts"

/**
 * What a single-gateway mode (`--soak`, `--rounds`, `--stages`) runs beside the gateway: the fake
 * upstream and, on PostgreSQL, a throw-away database. The processes it and the mode start are
 * stopped, and the database dropped, when the mode ends and also when the bench is stopped from
 * outside (Ctrl-C, a timeout), so none outlives the run.
 */
export interface Harness {
  readonly upstream: Awaited<ReturnType<typeof startUpstream>>
  /** The throw-away database on PostgreSQL, `undefined` on SQLite. */
  readonly databaseUrl: string | undefined
  /** Stopped (last started first) when the harness closes. */
  readonly children: Array<Child>
  /** Run after the processes stopped, first added first. */
  readonly cleanups: Array<() => Promise<unknown>>
}

export const run = async <A>(
  options: {
    readonly logDir: string
    readonly store: "sqlite" | "postgres"
    readonly serverUrl: string | undefined
    /** The most inputs the fake upstream takes in one call (64 unless given). */
    readonly upstreamMaxInputs?: number
  },
  body: (harness: Harness) => Promise<A>
): Promise<A> => {
  const children: Array<Child> = []
  const cleanups: Array<() => Promise<unknown>> = []
  const stopAll = async () => {
    await Promise.all(children.reverse().map((c) => c.stop().catch(() => undefined)))
    for (const cleanup of cleanups) await cleanup().catch(() => undefined)
  }
  const onSignal = () => {
    void stopAll().finally(() => process.exit(130))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  try {
    const upstream = await startUpstream(options.logDir, { width, delays: {}, maxInputs: options.upstreamMaxInputs ?? 64 })
    children.push(upstream)
    let databaseUrl: string | undefined
    if (options.store === "postgres") {
      if (options.serverUrl === undefined) throw new Error("the PostgreSQL store needs DATABASE_URL")
      const serverUrl = options.serverUrl
      const url = await PgDatabase.create(serverUrl)
      databaseUrl = url
      cleanups.push(() => PgDatabase.drop(serverUrl, url))
    }
    return await body({ upstream, databaseUrl, children, cleanups })
  } finally {
    process.removeListener("SIGINT", onSignal)
    process.removeListener("SIGTERM", onSignal)
    await stopAll()
  }
}

/**
 * Priced small c=16 at the gateway `sy` (the cache bypassed), its first answer checked to carry
 * exactly the upstream's vectors: the load every single-gateway mode runs.
 */
export const pricedSmall = async (
  harness: Harness,
  sy: { readonly port: number; readonly apiKey: string },
  cellId: "small-c1" | "small-c16" = "small-c16"
) => {
  const cell = cells.find((c) => c.id === cellId)!
  const request = requestFor(cell, "switchyard", {
    upstreamPort: harness.upstream.port,
    ports: { switchyard: sy.port },
    apiKeys: { switchyard: sy.apiKey },
    upstreamApiKey
  })
  const problem = await validate(cell, request, "bypass")
  if (problem !== undefined) throw new Error(`Switchyard ${problem}`)
  return { cell, request }
}

/**
 * On PostgreSQL, the server's processes working for this run's database (their CPU, its size),
 * closed with the harness; `undefined` on SQLite, or when those processes are not visible here.
 */
export const pgServer = async (harness: Harness, serverUrl: string | undefined) => {
  if (harness.databaseUrl === undefined || serverUrl === undefined) return undefined
  const server = await PgServer.connect(serverUrl, harness.databaseUrl)
  if (server !== undefined) harness.cleanups.unshift(() => server.close())
  return server
}
