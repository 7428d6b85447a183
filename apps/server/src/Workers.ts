/**
 * `SWITCHYARD_WORKERS=N` (`auto`: the machine's cores; default 1): N gateway processes serving one
 * port, for all the cores of one machine. A primary process forks the workers (`node:cluster`:
 * the primary accepts the connections and hands them out in turn) and supervises them; each worker
 * is a whole gateway on the same store.
 *
 * **Details**
 *
 * - Money stays exact across the workers through the same spend leases replicas use: on the
 *   embedded SQLite store every grant and ledger flush is one `BEGIN IMMEDIATE` transaction on the
 *   shared file (`SqliteMoneyStore`), and each worker registers and heartbeats like a replica, so
 *   a worker that dies has its holds swept by the others (`GatewayProcesses`).
 * - One lock owner: the primary takes the data directory's lock (`DataDirLock`) before it forks,
 *   so no other gateway runs on the directory, and the workers, its children, do not take it.
 *   Worker 1 alone runs the store's upkeep and the ledger's retention ({@link upkeepHere}).
 * - Start: worker 1 starts alone (migrations, bootstrap) and the others once it listens; a start
 *   failure of worker 1 is the gateway's (its one line, exit code 1).
 * - A worker that exits while the gateway is not stopping is started again (one second later).
 *   SIGTERM or SIGINT to the primary stops every worker gracefully and then the primary (exit 0).
 * - With one worker nothing is forked: the process is the gateway, as before.
 */
import { Config, ConfigProvider, Data, Effect } from "effect"
import * as Cluster from "node:cluster"
import * as Os from "node:os"

/** `SWITCHYARD_WORKERS` is not a number of processes. */
export class WorkersSetting extends Data.TaggedError("WorkersSetting")<{ readonly message: string }> {}

/** The environment variable that numbers a worker (1 to N) in the processes the primary forks. */
const workerIndexVariable = "SWITCHYARD_WORKER_INDEX"

/** How many workers `SWITCHYARD_WORKERS` asks for, or a sentence saying why it is not a count. */
export const parse = (value: string | undefined, cores = Os.availableParallelism()): number | string => {
  const text = (value ?? "").trim()
  if (text === "") return 1
  if (text === "auto") return Math.max(1, cores)
  if (!/^[1-9][0-9]*$/u.test(text) || Number(text) > 256) {
    return `SWITCHYARD_WORKERS must be a number of processes from 1 to 256, or auto (the machine's cores); got ${JSON.stringify(text)}`
  }
  return Number(text)
}

/**
 * The number of gateway processes `SWITCHYARD_WORKERS` asks for (default 1, `auto`: the machine's
 * cores), parsed here once for every module that depends on it: the gateway's start, the money
 * store's process registration and the batches' claims. A value that is not a count fails the
 * start with {@link parse}'s sentence.
 */
export const count: Config.Config<number> = Config.String("SWITCHYARD_WORKERS").pipe(
  Config.withDefault(""),
  Config.mapEffect((text) => {
    const workers = parse(text)
    return typeof workers === "number" ? Effect.succeed(workers) : Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({ message: workers })))
  })
)

/** This process's worker number (1 to N) when a primary forked it, else `undefined`. */
export const index = (): number | undefined => {
  const value = process.env[workerIndexVariable]
  return Cluster.default.isWorker && value !== undefined ? Number(value) : undefined
}

/** Whether the data directory's lock is held for this process by its primary. */
export const lockHeldByPrimary = (): boolean => index() !== undefined

/** Whether this process runs the store's upkeep and the ledger's retention: the only gateway, or worker 1. */
export const upkeepHere = (): boolean => {
  const i = index()
  return i === undefined || i === 1
}

export interface Primary {
  /** Resolves with the exit code once every worker ended. */
  readonly done: Promise<number>
  /** Stops every worker gracefully (SIGTERM); resolves once they all ended. */
  readonly stop: () => Promise<number>
}

/**
 * Runs the primary (the data directory's lock already held): forks the workers (the first alone
 * until it listens), starts again those that exit, and stops them all on {@link Primary.stop}.
 */
export const primary = (workers: number, log: (line: string) => void): Primary => {
  const cluster = Cluster.default
  let stopping = false
  let started = false
  const live = new Map<number, Cluster.Worker>()
  let finish: (code: number) => void = () => {}
  const done = new Promise<number>((resolve) => (finish = resolve))

  const fork = (i: number) => {
    const worker = cluster.fork({ ...process.env, [workerIndexVariable]: String(i) })
    live.set(i, worker)
    worker.once("listening", () => {
      if (i === 1 && !started) {
        started = true
        for (let next = 2; next <= workers; next++) fork(next)
      }
    })
    worker.once("exit", (code, signal) => {
      live.delete(i)
      if (stopping) {
        if (live.size === 0) finish(0)
        return
      }
      if (!started) {
        // Worker 1 could not start: its line said why, and the gateway does not start.
        stopping = true
        for (const other of live.values()) other.kill("SIGTERM")
        if (live.size === 0) finish(1)
        return
      }
      log(`switchyard: worker ${i} exited (${signal ?? `code ${code}`}); starting it again`)
      setTimeout(() => {
        if (!stopping) fork(i)
      }, 1000)
    })
  }

  const stop = () => {
    if (!stopping) {
      stopping = true
      if (live.size === 0) finish(0)
      for (const worker of live.values()) worker.kill("SIGTERM")
    }
    return done
  }
  fork(1)
  return { done, stop }
}
