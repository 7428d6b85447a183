/**
 * Keeps the SQLite store in shape while the gateway runs: its planner statistics current, its
 * write-ahead log checkpointed and bounded, and the space retention's deletes free given back to
 * the file system, in short steps with the store free for requests between them.
 *
 * **Details**
 *
 * SQLite runs one statement at a time on the gateway's one connection, in its own thread: while an
 * upkeep statement runs, every request waits. So every {@link every}:
 *
 * - **Statistics.** `PRAGMA optimize` runs `ANALYZE` on the tables whose row counts moved enough
 *   since the last one, each bounded by `PRAGMA analysis_limit` ({@link analysisLimit} rows a
 *   index), so its work does not grow with the ledger. It runs in the form SQLite recommends when
 *   a connection opens (`0x10002`: every table, not only those this connection has read), at
 *   start and at each look.
 * - **The write-ahead log.** SQLite checkpoints it itself once it holds 1,000 pages (4 MB), and
 *   `journal_size_limit` ({@link walLimitBytes}) truncates the file to that size whenever a
 *   checkpoint starts it over. Upkeep adds a `PRAGMA wal_checkpoint(PASSIVE)`, which never waits
 *   for another process (`SWITCHYARD_WORKERS`): a log a reader held back is copied back as soon as
 *   it is free. The log file's largest size: {@link walLimitBytes}, plus at most one transaction's
 *   pages beyond SQLite's 4 MB checkpoint point while a reader holds it.
 * - **Space.** The file is `auto_vacuum = INCREMENTAL`: pages freed by retention's deletes (and the
 *   cache's eviction) stay on the free list until `PRAGMA incremental_vacuum(N)` moves them to the
 *   end of the file and truncates it. Upkeep gives back {@link vacuumPages} pages a step, a step
 *   each {@link stepEvery} while pages are free, so no step holds the store long (the figures are
 *   in docs/decisions.md, "Default store").
 *
 * On PostgreSQL this does nothing: autovacuum does it, and the migrations ANALYZE after they
 * changed anything.
 */
import { Duration, Effect, Layer } from "effect"
import type { Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as Span from "../../instrumentation/Span.ts"

/** How often the statistics and the log are looked after. */
export const every = Duration.minutes(1)

/** How long after a step of giving pages back the next one runs. */
export const stepEvery = Duration.seconds(1)

/** Pages (of 4 KB) one incremental vacuum step gives back. */
export const vacuumPages = 256

/** Rows `ANALYZE` reads of each index (`PRAGMA analysis_limit`). */
const analysisLimit = 1_000

/** What the write-ahead log file is truncated to after a checkpoint starts it over (`journal_size_limit`). */
export const walLimitBytes = 16 * 1024 * 1024

/** The store's settings upkeep relies on, set when the SQLite store opens. */
export const settings = [
  `PRAGMA journal_size_limit = ${walLimitBytes}`,
  `PRAGMA analysis_limit = ${analysisLimit}`
] as const

/** What a step did and how long it held the store. */
export interface Done {
  readonly step: "optimize" | "checkpoint" | "vacuum"
  readonly millis: number
  /** Checkpoint: the log's frames and those copied back; vacuum: the pages given back. */
  readonly detail: string
  /** Checkpoint: the log's frames; vacuum: the pages given back; optimize: 0. */
  readonly count: number
}

const timed = <A>(step: Done["step"], self: Effect.Effect<A, unknown>, detail: (a: A) => string, count: (a: A) => number = () => 0) =>
  Effect.gen(function*() {
    const startedAt = performance.now()
    const result = yield* self
    return { step, millis: performance.now() - startedAt, detail: detail(result), count: count(result) } satisfies Done
  })

/** `PRAGMA optimize`: ANALYZE where the row counts moved enough. */
export const optimize = (sql: SqlClient.SqlClient) => timed("optimize", sql.unsafe("PRAGMA optimize=0x10002"), () => "")

/** A checkpoint that waits for no one: the log's frames and those now in the database file. */
const checkpoint = (sql: SqlClient.SqlClient) =>
  timed(
    "checkpoint",
    sql.unsafe<{ busy: number; log: number; checkpointed: number }>("PRAGMA wal_checkpoint(PASSIVE)"),
    (rows) => `${rows[0]?.log ?? 0} frames, ${rows[0]?.checkpointed ?? 0} checkpointed`,
    (rows) => Math.max(0, Number(rows[0]?.log ?? 0))
  )

/** Pages on the free list, waiting to be given back. */
export const freePages = (sql: SqlClient.SqlClient) =>
  Effect.map(sql.unsafe<{ freelist_count: number }>("PRAGMA freelist_count"), (rows) => Number(rows[0]?.freelist_count ?? 0))

/** One step of giving free pages back: at most {@link vacuumPages}. */
const vacuumStep = (sql: SqlClient.SqlClient, pages = vacuumPages) =>
  Effect.gen(function*() {
    const before = yield* freePages(sql)
    if (before === 0) return undefined
    return yield* timed(
      "vacuum",
      Effect.andThen(sql.unsafe(`PRAGMA incremental_vacuum(${pages})`), freePages(sql)),
      (after) => `${before - after} pages`,
      (after) => before - after
    )
  })

/** Every free page given back, a step at a time; the steps. */
export const vacuumAll = (sql: SqlClient.SqlClient, pages = vacuumPages) =>
  Effect.gen(function*() {
    const done: Array<Done> = []
    for (;;) {
      const step = yield* vacuumStep(sql, pages)
      if (step === undefined) return done
      done.push(step)
      if (step.detail === "0 pages") return done
    }
  })

const logged = (done: ReadonlyArray<Done>) =>
  done.length === 0 ? Effect.void : Effect.logDebug("store upkeep").pipe(
    Effect.annotateLogs({ done: done.map((d) => `${d.step} ${d.detail} ${d.millis.toFixed(1)} ms`).join(", ") })
  )

/** A run's trace attributes, or `undefined` when it did nothing (no span is exported). */
const reported = (done: ReadonlyArray<Done>) =>
  done.some((d) => d.count > 0)
    ? { "switchyard.store.upkeep": done.map((d) => `${d.step} ${d.detail}`).join(", ") }
    : undefined

const failed = (cause: unknown) => Effect.logWarning("store upkeep failed; the next look tries again", cause)

/**
 * On SQLite: {@link optimize} and a checkpoint at start, then every {@link every} an optimize and
 * a checkpoint, and a vacuum step each {@link stepEvery} while pages are free, for as long as the
 * scope is open (on `Clock`: a test drives it with `TestClock`); nothing on PostgreSQL. A step that
 * fails is logged and the next look tries again. A look whose log did not move since the one
 * before, and a vacuum step with no free pages, export no trace span (`Span.job`).
 */
export const start: Effect.Effect<void, never, SqlClient.SqlClient | Scope.Scope> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  if (sql.onDialectOrElse({ sqlite: () => false, orElse: () => true })) return
  yield* optimize(sql).pipe(Effect.asVoid, Effect.catchCause(failed))
  // A trace root only for a look whose log moved since the previous look (or the start): an idle
  // store's looks (the same frames, all copied back already) leave none.
  let previous = yield* checkpoint(sql).pipe(
    Effect.map((d) => d.detail),
    Effect.catchCause((cause) => Effect.as(failed(cause), ""))
  )
  const look = Effect.all([optimize(sql), checkpoint(sql)]).pipe(
    Span.job("store.upkeep", (done) => {
      const log = done.find((d) => d.step === "checkpoint")?.detail ?? ""
      const moved = log !== previous
      previous = log
      return moved ? reported(done) : undefined
    }),
    Effect.tap(logged),
    Effect.catchCause(failed)
  )
  yield* Effect.gen(function*() {
    for (;;) {
      yield* Effect.sleep(every)
      yield* look
    }
  }).pipe(Effect.forkScoped)
  yield* Effect.gen(function*() {
    for (;;) {
      yield* Effect.sleep(stepEvery)
      yield* vacuumStep(sql).pipe(
        Span.job("store.upkeep", (done) => (done === undefined ? undefined : reported([done]))),
        Effect.tap((done) => (done === undefined ? Effect.void : logged([done]))),
        Effect.catchCause(failed)
      )
    }
  }).pipe(Effect.forkScoped)
})

/** The upkeep of the gateway's store (see {@link start}). */
export const layer: Layer.Layer<never, never, SqlClient.SqlClient> = Layer.effectDiscard(start)
