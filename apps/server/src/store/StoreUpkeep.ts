/**
 * Keeps PGlite's planner statistics and visibility map current: PGlite has no autovacuum, so
 * without this the ledger's statistics stay "unknown" (`reltuples = -1`) however large it grows,
 * and the dead rows of the counters' updates are only pruned page by page.
 *
 * **Details**
 *
 * Every `every` (one minute) the upkeep reads how many rows each table gained, changed or left dead
 * since its last ANALYZE or VACUUM (`pg_stat_user_tables`) and, table by table, runs what
 * PostgreSQL's autovacuum would with its default thresholds:
 *
 * - `ANALYZE` once the rows changed since the last one reach 50 + 10 % of the table;
 * - `VACUUM` once the dead rows reach 50 + 20 % of the table, or the rows inserted since the last
 *   one reach 1,000 + 20 % (an insert-only table such as the ledger then gets its pages marked
 *   all-visible and frozen a slice at a time).
 *
 * The work is sized by the rows changed, not by the table: a VACUUM reads only the pages not yet
 * all-visible, an ANALYZE a fixed sample. Each table is one statement; requests wait at most for
 * one of them (PGlite runs one statement at a time). On PostgreSQL this does nothing: autovacuum
 * does it, and the migrations ANALYZE after they changed anything.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import type { Scope } from "effect"
import { SqlClient } from "effect/sql"

export interface UpkeepOptions {
  /** How often the tables are looked at. */
  readonly every?: Duration.Input
}

export const defaultEvery = Duration.minutes(1)

/** What one table's counters say since its last ANALYZE and VACUUM. */
export interface TableChanges {
  readonly table: string
  readonly live: number
  readonly dead: number
  readonly modified: number
  readonly inserted: number
}

/** What upkeep a table's changes call for (autovacuum's default thresholds). */
export const due = (t: TableChanges): { readonly analyze: boolean; readonly vacuum: boolean } => ({
  analyze: t.modified >= 50 + 0.1 * t.live,
  vacuum: t.dead >= 50 + 0.2 * t.live || t.inserted >= 1000 + 0.2 * t.live
})

/** One statement of upkeep and how long it kept the store. */
export interface Done {
  readonly table: string
  readonly statement: "ANALYZE" | "VACUUM" | "VACUUM (ANALYZE)"
  readonly millis: number
}

/**
 * One round: the tables whose changes call for it are analyzed and vacuumed, one statement each.
 */
export const round = (sql: SqlClient.SqlClient): Effect.Effect<ReadonlyArray<Done>, unknown> =>
  Effect.gen(function*() {
    // The counters of this session reach the shared statistics when it next reports them: now.
    yield* sql`SELECT pg_stat_force_next_flush()`
    const tables = yield* sql<{ table: string; live: string; dead: string; modified: string; inserted: string }>`
      SELECT relname AS table, n_live_tup::text AS live, n_dead_tup::text AS dead,
          n_mod_since_analyze::text AS modified, n_ins_since_vacuum::text AS inserted
        FROM pg_stat_user_tables WHERE schemaname = current_schema() ORDER BY relname`
    const done: Array<Done> = []
    for (const row of tables) {
      const changes: TableChanges = {
        table: row.table,
        live: Number(row.live),
        dead: Number(row.dead),
        modified: Number(row.modified),
        inserted: Number(row.inserted)
      }
      const { analyze, vacuum } = due(changes)
      if (!analyze && !vacuum) continue
      const statement = vacuum && analyze ? "VACUUM (ANALYZE)" : vacuum ? "VACUUM" : "ANALYZE"
      const startedAt = performance.now()
      yield* sql.unsafe(`${statement} "${row.table.replaceAll("\"", "\"\"")}"`)
      done.push({ table: row.table, statement, millis: performance.now() - startedAt })
    }
    return done
  })

/**
 * Runs {@link round} every `every` on PGlite for as long as the scope is open (on `Clock`: a test
 * drives it with `TestClock`); nothing on PostgreSQL. A round that fails is logged and the next
 * one tries again.
 */
export const start = (options: UpkeepOptions = {}): Effect.Effect<void, never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (sql.driver !== "pglite") return
    const every = options.every ?? defaultEvery
    yield* round(sql).pipe(
      Effect.tap((done) =>
        done.length === 0 ? Effect.void : Effect.logDebug("store upkeep").pipe(
          Effect.annotateLogs({ done: done.map((d) => `${d.statement} ${d.table} ${d.millis.toFixed(1)} ms`).join(", ") })
        )
      ),
      Effect.catchCause((cause) => Effect.logWarning("store upkeep failed", cause)),
      Effect.delay(every),
      Effect.repeat(Schedule.spaced(every)),
      Effect.forkScoped
    )
  })

/** The upkeep of the gateway's store (see {@link start}). */
export const layer: Layer.Layer<never, never, SqlClient.SqlClient> = Layer.effectDiscard(start())
