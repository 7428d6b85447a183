/**
 * One process per PGlite data directory. PGlite is an embedded database: two processes that open
 * one directory each write their own files over the other's, and what one of them wrote is lost.
 *
 * **Details**
 *
 * The lock is `<data dir>/pglite.lock` (a directory made atomically by `proper-lockfile`, whose
 * modification time the holder refreshes every few seconds) and `<data dir>/pglite.lock.json`
 * naming the holder (pid, host, start time). A second process finds the lock held and stops with
 * `DataDirLocked`. A lock left by a process that died (kill -9, power loss) is taken over: at once
 * when the holder ran on this host and its pid is gone, otherwise once the lock has not been
 * refreshed for ten seconds.
 *
 * **Gotchas**
 *
 * - If the event loop stalls for longer than ten seconds another process could take the lock
 *   over; the holder then logs an error (it cannot stop the other one).
 */
import { Data, Effect } from "effect"
import type { Scope } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import * as Lockfile from "proper-lockfile"

export class DataDirLocked extends Data.TaggedError("DataDirLocked")<{
  readonly dataDir: string
  readonly holder: string
}> {
  override get message() {
    return `the data directory ${this.dataDir} is in use by ${this.holder}; PGlite admits one process per data directory ` +
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

const staleMs = 10_000

const lockPath = (dataDir: string) => NodePath.join(dataDir, "pglite.lock")
const holderPath = (dataDir: string) => `${lockPath(dataDir)}.json`

const readHolder = (dataDir: string): Holder | undefined => {
  try {
    return JSON.parse(Fs.readFileSync(holderPath(dataDir), "utf8")) as Holder
  } catch {
    return undefined
  }
}

const describeHolder = (holder: Holder | undefined) =>
  holder === undefined ? "another process" : `process ${holder.pid} on ${holder.host} (since ${holder.started_at})`

/** Whether the holder is known to be gone: it ran on this host and no process has its pid (or it is this one). */
const holderGone = (holder: Holder | undefined) => {
  if (holder === undefined || holder.host !== Os.hostname()) return false
  if (holder.pid === process.pid) return true
  try {
    process.kill(holder.pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH"
  }
}

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code

/**
 * Holds the lock of `dataDir` for as long as the scope is open; fails with `DataDirLocked` when a
 * live process holds it.
 */
export const acquire = (dataDir: string): Effect.Effect<void, DataDirLocked | DataDirLockFailed, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        Fs.mkdirSync(dataDir, { recursive: true })
        const options: Lockfile.LockOptions = {
          lockfilePath: lockPath(dataDir),
          realpath: false,
          stale: staleMs,
          update: staleMs / 4,
          onCompromised: (error) => {
            process.stderr.write(`switchyard: the lock of ${dataDir} was taken over by another process: ${error.message}\n`)
          }
        }
        const attempt = () => Lockfile.lock(dataDir, options)
        let release: () => Promise<void>
        try {
          release = await attempt()
        } catch (error) {
          if (errorCode(error) !== "ELOCKED") throw error
          const holder = readHolder(dataDir)
          if (!holderGone(holder)) {
            // A holder on another host, or one that cannot be identified: wait until its lock would
            // count as stale; a live holder keeps refreshing it and this process gives up.
            if (holder !== undefined && holder.host === Os.hostname()) throw new DataDirLocked({ dataDir, holder: describeHolder(holder) })
            release = await Lockfile.lock(dataDir, {
              ...options,
              retries: { retries: 6, minTimeout: 2_000, maxTimeout: 2_000, factor: 1 }
            }).catch((again: unknown) => {
              if (errorCode(again) === "ELOCKED") throw new DataDirLocked({ dataDir, holder: describeHolder(readHolder(dataDir)) })
              throw again
            })
          } else {
            Fs.rmSync(lockPath(dataDir), { recursive: true, force: true })
            release = await attempt()
          }
        }
        const holder: Holder = { pid: process.pid, host: Os.hostname(), started_at: new Date().toISOString() }
        Fs.writeFileSync(holderPath(dataDir), `${JSON.stringify(holder)}\n`)
        return release
      },
      catch: (error) =>
        error instanceof DataDirLocked
          ? error
          : new DataDirLockFailed({ dataDir, reason: error instanceof Error ? error.message : String(error) })
    }),
    (release) =>
      Effect.promise(async () => {
        Fs.rmSync(holderPath(dataDir), { force: true })
        await release().catch(() => undefined)
      })
  ).pipe(Effect.asVoid)
