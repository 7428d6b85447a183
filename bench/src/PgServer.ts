import { PgClient } from "@effect/sql-pg"
import { Effect, type Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as ProcStats from "./ProcStats.ts"

/**
 * The PostgreSQL server's side of a run: the CPU time of the server processes that work for one
 * database, and the database's size. The processes are those `pg_stat_activity` lists for that
 * database (the gateway's connections, an autovacuum worker on it) and the server's shared ones
 * (checkpointer, background writer, WAL writer, autovacuum launcher: no database), plus the
 * postmaster; connections to other databases on the same server (other benchmarks, test suites)
 * are not counted. CPU time is read from /proc, so the server must run on this machine.
 *
 * The monitoring connection goes to the server's own database (`serverUrl`), not the measured one.
 */
export interface PgServer {
  /** CPU milliseconds used so far by each process now working for the database, by pid. */
  readonly cpu: () => Promise<ReadonlyMap<number, number>>
  /** The database's size on disk (`pg_database_size`), in bytes. */
  readonly size: () => Promise<number>
  readonly close: () => Promise<void>
}

interface Activity {
  readonly pid: number
  readonly datname: string | null
}

/** The pid's parent, from /proc (undefined when the process is not visible here). */
const parentOf = (pid: number): number | undefined => {
  try {
    const match = /^PPid:\s+(\d+)$/mu.exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1])
  } catch {
    return undefined
  }
}

/** The pids to count: `database`'s and the shared processes, and their common parent (the postmaster). */
export const pidsFor = (rows: ReadonlyArray<Activity>, database: string, self: number, parent: (pid: number) => number | undefined): ReadonlyArray<number> => {
  const mine = rows.filter((r) => r.pid !== self && (r.datname === database || r.datname === null)).map((r) => r.pid)
  const postmaster = mine.length === 0 ? undefined : parent(mine[0]!)
  return postmaster === undefined || postmaster <= 1 ? mine : [...mine, postmaster]
}

/** CPU milliseconds of `pids` between two readings: a process that appeared in between counts from 0, one that ended is lost. */
export const cpuBetween = (before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number => {
  let total = 0
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0)
  return total
}

export const connect = async (serverUrl: string, databaseUrl: string): Promise<PgServer | undefined> => {
  const database = decodeURIComponent(new URL(databaseUrl).pathname.slice(1))
  const runtime = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 }) as Layer.Layer<SqlClient.SqlClient>)
  const query = <A extends object>(text: string, params: ReadonlyArray<unknown> = []) =>
    runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text, params)))
  const [me] = await query<{ pid: number }>("SELECT pg_backend_pid() AS pid")
  const self = Number(me!.pid)
  // Without /proc access to the server's processes (another host, another container), no CPU figure.
  if (!Fs.existsSync(`/proc/${self}/stat`)) {
    await runtime.dispose()
    return undefined
  }
  return {
    cpu: async () => {
      const rows = await query<Activity>("SELECT pid, datname FROM pg_stat_activity")
      const out = new Map<number, number>()
      for (const pid of pidsFor(rows.map((r) => ({ pid: Number(r.pid), datname: r.datname })), database, self, parentOf)) {
        try {
          out.set(pid, ProcStats.cpuMillis(pid))
        } catch {
          // ended since the listing
        }
      }
      return out
    },
    size: async () => Number((await query<{ bytes: string }>("SELECT pg_database_size($1)::text AS bytes", [database]))[0]!.bytes),
    close: () => runtime.dispose()
  }
}
