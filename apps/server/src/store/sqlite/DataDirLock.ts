/**
 * One gateway per data directory: the embedded store's upkeep, retention and dead-process sweep
 * assume they are the only ones at work on its file (SQLite itself keeps concurrent connections
 * safe; several processes of one gateway share it through `SWITCHYARD_WORKERS`).
 *
 * **Details**
 *
 * The lock is an advisory lock of the operating system on `<data dir>/switchyard.lock`, taken
 * through Node's built-in SQLite (`node:sqlite`: a transaction begun `EXCLUSIVE` and held open,
 * which is `fcntl` on Unix and `LockFileEx` on Windows). The kernel releases it when the process
 * ends, however it ends: after a kill -9 it is free before the parent can see the process exit, so
 * a supervisor's immediate restart takes it on the first try. A second live process finds it held
 * and stops with `DataDirLocked`, naming the holder from `<data dir>/switchyard.lock.json` (pid, host,
 * start time), which the holder writes once it has the lock. That file only names the holder; the
 * lock alone decides, so a stale file left by a killed process decides nothing.
 *
 * **Gotchas**
 *
 * - On a network file system the lock is only as good as its lock manager (NFSv4 and SMB honour
 *   it; some FUSE file systems do not).
 * - The lock is per process: a second acquisition of the same directory within one process is
 *   refused too (SQLite tracks its locks per file), which is what one process per directory means.
 */
import { Data, Effect } from "effect"
import type { Scope } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { DatabaseSync } from "node:sqlite"
import * as Workers from "../../Workers.ts"

export class DataDirLocked extends Data.TaggedError("DataDirLocked")<{
  readonly dataDir: string
  readonly holder: string
}> {
  override get message() {
    return `the data directory ${this.dataDir} is in use by ${this.holder}; one gateway runs per data directory ` +
      "(stop that process, give this one another SWITCHYARD_DATA_DIR, or share a PostgreSQL server with DATABASE_URL)"
  }
}

export class DataDirLockFailed extends Data.TaggedError("DataDirLockFailed")<{
  readonly dataDir: string
  readonly reason: string
}> {
  override get message() {
    return `cannot lock the data directory ${this.dataDir}: ${this.reason}`
  }
}

interface Holder {
  readonly pid: number
  readonly host: string
  readonly started_at: string
}

const lockPath = (dataDir: string) => NodePath.join(dataDir, "switchyard.lock")
const holderPath = (dataDir: string) => NodePath.join(dataDir, "switchyard.lock.json")

const readHolder = (dataDir: string): Holder | undefined => {
  try {
    return JSON.parse(Fs.readFileSync(holderPath(dataDir), "utf8")) as Holder
  } catch {
    return undefined
  }
}

const describeHolder = (holder: Holder | undefined) =>
  holder === undefined ? "another process" : `process ${holder.pid} on ${holder.host} (since ${holder.started_at})`

// SQLITE_BUSY: another connection holds the lock.
const isBusy = (error: unknown) => (error as { readonly errcode?: unknown } | undefined)?.errcode === 5

/** The open lock file with its exclusive lock taken, or `DataDirLocked` when another process holds it. */
const take = (dataDir: string): DatabaseSync => {
  Fs.mkdirSync(dataDir, { recursive: true })
  // No waiting: a held lock is a live holder.
  const lock = new DatabaseSync(lockPath(dataDir), { timeout: 0 })
  try {
    // Nothing is ever written: no journal file beside the lock.
    lock.exec("PRAGMA journal_mode = OFF")
    lock.exec("BEGIN EXCLUSIVE")
  } catch (error) {
    lock.close()
    if (isBusy(error)) throw new DataDirLocked({ dataDir, holder: describeHolder(readHolder(dataDir)) })
    throw error
  }
  const holder: Holder = { pid: process.pid, host: Os.hostname(), started_at: new Date().toISOString() }
  Fs.writeFileSync(holderPath(dataDir), `${JSON.stringify(holder)}\n`)
  return lock
}

/**
 * Holds the lock of `dataDir` for as long as the scope is open; fails with `DataDirLocked` when a
 * live process holds it.
 */
export const acquire = (dataDir: string): Effect.Effect<void, DataDirLocked | DataDirLockFailed, Scope.Scope> =>
  // A worker of `SWITCHYARD_WORKERS`: its primary holds the lock for the whole gateway.
  Workers.lockHeldByPrimary() ? Effect.void : Effect.acquireRelease(
    Effect.try({
      try: () => take(dataDir),
      catch: (error) =>
        error instanceof DataDirLocked
          ? error
          : new DataDirLockFailed({ dataDir, reason: error instanceof Error ? error.message : String(error) })
    }),
    (lock) =>
      Effect.sync(() => {
        Fs.rmSync(holderPath(dataDir), { force: true })
        lock.exec("ROLLBACK")
        lock.close()
      })
  ).pipe(Effect.asVoid)
