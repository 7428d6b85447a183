/**
 * Keeps PGlite's planner statistics and visibility map current: PGlite has no autovacuum, so
 * without this the ledger's statistics stay "unknown" (`reltuples = -1`) however large it grows,
 * and the dead rows of the counters' updates are only pruned page by page.
 *
 * **Details**
 *
 * PGlite runs one statement at a time, in the gateway's own thread: while an upkeep statement runs,
 * every request waits. So the upkeep is a series of short steps, one statement on one table each,
 * with the store free for requests between them:
 *
 * - It reads how many rows each table gained, changed or left dead since its last ANALYZE or VACUUM
 *   (`pg_stat_user_tables`) and runs the one step that is most overdue; it looks again five seconds
 *   after a step, a minute after a look that found nothing due.
 * - `VACUUM` once the dead or the inserted rows reach autovacuum's default threshold (50 + 20 %
 *   dead, 1,000 + 20 % inserted) or {@link maxChanges}, whichever is less: a VACUUM reads only the
 *   pages not yet all-visible, so on a large table it stays a few milliseconds (the pages of
 *   10,000 rows) instead of one long pass every fifth of the table. Index passes follow
 *   PostgreSQL's own rule (`INDEX_CLEANUP AUTO`: only once the pages with dead rows pass 2 % of the
 *   table), so they come as often as with autovacuum.
 * - `ANALYZE` once the rows changed since the last one reach autovacuum's 50 + 10 % of the table,
 *   sampling {@link sampleRows} rows ({@link statisticsTarget}, not PostgreSQL's 30,000): its work is
 *   the sample, whatever the table's size.
 * - At start, before the gateway serves, every table with more than {@link catchUpPages} pages
 *   never vacuumed (a store written by a version without upkeep, or bulk-loaded) is vacuumed: that
 *   first pass reads the whole table, the one step whose work is not bounded.
 *
 * On PostgreSQL this does nothing: autovacuum does it, and the migrations ANALYZE after they
 * changed anything.
 */
import { Duration, Effect, Layer } from "effect"
import type { Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as Span from "../observability/Span.ts"

/** How long after a look that found nothing due the tables are looked at again. */
export const idleEvery = Duration.minutes(1)

/** How long after a step the tables are looked at again: the store is the requests' in between. */
export const stepEvery = Duration.seconds(5)

/** A table is vacuumed at the latest once this many rows were inserted, or left dead, since the last VACUUM. */
export const maxChanges = 10_000

/** The statistics target of the upkeep's ANALYZE: it samples 300 rows per unit, from as many pages. */
export const statisticsTarget = 10
export const sampleRows = 300 * statisticsTarget

/** At start, a table with more pages than this not yet all-visible is vacuumed before the gateway serves. */
export const catchUpPages = 1_000

/** What one table's counters say since its last ANALYZE and VACUUM. */
export interface TableChanges {
  readonly table: string
  readonly live: number
  readonly dead: number
  readonly modified: number
  readonly inserted: number
  /** Pages not all-visible when last counted, plus the pages added since: what a VACUUM reads. */
  readonly unvisited: number
}

/**
 * How overdue each statement is for a table: its changes over the threshold (1 or more: due).
 */
export const overdue = (t: TableChanges): { readonly analyze: number; readonly vacuum: number } => ({
  analyze: t.modified / (50 + 0.1 * t.live),
  vacuum: Math.max(
    t.dead / Math.min(50 + 0.2 * t.live, maxChanges),
    t.inserted / Math.min(1000 + 0.2 * t.live, maxChanges)
  )
})

/** What upkeep a table's changes call for. */
export const due = (t: TableChanges): { readonly analyze: boolean; readonly vacuum: boolean } => {
  const o = overdue(t)
  return { analyze: o.analyze >= 1, vacuum: o.vacuum >= 1 }
}

/** One statement of upkeep on one table. */
export interface Step {
  readonly table: string
  readonly statement: "ANALYZE" | "VACUUM"
}

/** The steps the tables' changes call for, the most overdue first. */
export const steps = (tables: ReadonlyArray<TableChanges>): ReadonlyArray<Step> =>
  tables
    .flatMap((t) => {
      const o = overdue(t)
      return [
        { step: { table: t.table, statement: "VACUUM" } as const, by: o.vacuum },
        { step: { table: t.table, statement: "ANALYZE" } as const, by: o.analyze }
      ]
    })
    .filter((s) => s.by >= 1)
    .sort((a, b) => b.by - a.by)
    .map((s) => s.step)

/** A step done and how long it kept the store. */
export interface Done extends Step {
  readonly millis: number
}

/** Every table's changes since its last ANALYZE and VACUUM. */
export const look = (sql: SqlClient.SqlClient): Effect.Effect<ReadonlyArray<TableChanges>, unknown> =>
  Effect.gen(function*() {
    // The counters of this session reach the shared statistics when it next reports them: now.
    yield* sql`SELECT pg_stat_force_next_flush()`
    const rows = yield* sql<{ table: string; live: string; dead: string; modified: string; inserted: string; unvisited: string }>`
      SELECT s.relname AS table, s.n_live_tup::text AS live, s.n_dead_tup::text AS dead,
          s.n_mod_since_analyze::text AS modified, s.n_ins_since_vacuum::text AS inserted,
          greatest(pg_relation_size(s.relid) / current_setting('block_size')::int - c.relallvisible, 0)::text AS unvisited
        FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
        WHERE s.schemaname = current_schema() ORDER BY s.relname`
    return rows.map((row) => ({
      table: row.table,
      live: Number(row.live),
      dead: Number(row.dead),
      modified: Number(row.modified),
      inserted: Number(row.inserted),
      unvisited: Number(row.unvisited)
    }))
  })

const quoted = (table: string) => `"${table.replaceAll("\"", "\"\"")}"`

/** Runs one step. */
export const run = (sql: SqlClient.SqlClient, step: Step): Effect.Effect<Done, unknown> =>
  Effect.gen(function*() {
    const startedAt = performance.now()
    if (step.statement === "VACUUM") {
      yield* sql.unsafe(`VACUUM ${quoted(step.table)}`)
    } else {
      // ANALYZE may run in a transaction, so the smaller sample is this statement's alone.
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql.unsafe(`SET LOCAL default_statistics_target = ${statisticsTarget}`)
        yield* sql.unsafe(`ANALYZE ${quoted(step.table)}`)
      }))
    }
    return { ...step, millis: performance.now() - startedAt }
  })

/** The most overdue step, if any is due. */
export const next = (sql: SqlClient.SqlClient): Effect.Effect<ReadonlyArray<Done>, unknown> =>
  Effect.gen(function*() {
    const [step] = steps(yield* look(sql))
    return step === undefined ? [] : [yield* run(sql, step)]
  })

/** VACUUM of every table with more than {@link catchUpPages} pages a VACUUM has not yet seen. */
export const catchUp = (sql: SqlClient.SqlClient): Effect.Effect<ReadonlyArray<Done>, unknown> =>
  Effect.gen(function*() {
    const done: Array<Done> = []
    for (const t of yield* look(sql)) {
      if (t.unvisited > catchUpPages) done.push(yield* run(sql, { table: t.table, statement: "VACUUM" }))
    }
    return done
  })

const logged = (log: (message: string) => Effect.Effect<void>, message: string) => (done: ReadonlyArray<Done>) =>
  done.length === 0 ? Effect.void : log(message).pipe(
    Effect.annotateLogs({ done: done.map((d) => `${d.statement} ${d.table} ${d.millis.toFixed(1)} ms`).join(", ") })
  )

/**
 * On PGlite: {@link catchUp} now, then {@link next} a minute later and again {@link stepEvery} after
 * a step or {@link idleEvery} after a look that found nothing due, for as long as the scope is open
 * (on `Clock`: a test drives it with `TestClock`); nothing on PostgreSQL. A step that fails is
 * logged and the next look tries again.
 */
export const start: Effect.Effect<void, never, SqlClient.SqlClient | Scope.Scope> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  if (sql.driver !== "pglite") return
  yield* catchUp(sql).pipe(
    // Said at start: it is why this start took longer.
    Effect.tap(logged(Effect.logInfo, "store upkeep: tables never vacuumed were vacuumed before serving")),
    Effect.catchCause((cause) => Effect.logWarning("store upkeep failed", cause))
  )
  const step = next(sql).pipe(
    Span.job("store.upkeep", (done) => done.length === 0 ? undefined : { "switchyard.store.upkeep": done.map((d) => `${d.statement} ${d.table}`).join(", ") }),
    Effect.tap(logged(Effect.logDebug, "store upkeep")),
    Effect.catchCause((cause) => Effect.as(Effect.logWarning("store upkeep failed", cause), []))
  )
  yield* Effect.gen(function*() {
    let wait = idleEvery
    for (;;) {
      yield* Effect.sleep(wait)
      wait = (yield* step).length > 0 ? stepEvery : idleEvery
    }
  }).pipe(Effect.forkScoped)
})

/** The upkeep of the gateway's store (see {@link start}): its catch-up is done before the gateway serves. */
export const layer: Layer.Layer<never, never, SqlClient.SqlClient> = Layer.effectDiscard(start)
