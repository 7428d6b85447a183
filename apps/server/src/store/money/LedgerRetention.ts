/**
 * Ledger retention: per-request ledger rows are kept `SWITCHYARD_LEDGER_RETENTION_DAYS` whole UTC
 * days before today; older ones are folded into the daily rollups (`ledger_daily`) and deleted,
 * a batch at a time, in the background.
 *
 * **Details**
 *
 * - **Exact.** One statement picks a batch of rows before the cut, deletes them, adds their sums
 *   to their rollup rows and moves the pruned-before mark: every total a report reads from the
 *   rollups plus the live rows stays the same. Spend counters, budgets and credits never read the
 *   ledger rows (they keep their own counters), so pruning does not touch them.
 * - **Bounded.** A batch takes at most `batchRows` rows, found through `ledger_workspace_time` (per
 *   workspace, oldest first) and removed by primary key; a full batch is followed by a pause of the
 *   machine's time, so requests are served between batches (on SQLite every statement takes turns
 *   on one connection, and a batch holds the file's write lock).
 * - **Replicas.** The rows of a batch are locked `SKIP LOCKED`: replicas sharing one PostgreSQL
 *   prune different rows, and a row is folded once, by the statement that deleted it. On SQLite a
 *   batch is one `BEGIN IMMEDIATE` transaction (fold, delete, mark), which no other writer of the
 *   file interleaves.
 * - **When.** At start and every `interval` (ten minutes); the cut moves once a day, so one run a
 *   day does the work, the others find nothing.
 */
import { fromSqlError, type StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Clock, Config, Context, Duration, Effect, Layer, Option, Schedule, Schema, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import * as Span from "../../instrumentation/Span.ts"
import { type Instant, instant } from "../sql/Columns.ts"
import * as Workers from "../../Workers.ts"

const RetentionConfig = Config.schema(
  Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 36_500 })),
  "SWITCHYARD_LEDGER_RETENTION_DAYS"
).pipe(Config.withDefault(62))

export interface RetentionOptions {
  /** Whole UTC days kept before today. */
  readonly days: number
  /** The most rows one statement prunes. */
  readonly batchRows?: number
  /** The machine's time between two full batches. */
  readonly pauseMs?: number
  /** Time between two runs. */
  readonly interval?: Duration.Input
  /** Whether this process prunes on its schedule (`false`: another worker of the gateway does). */
  readonly scheduled?: boolean
}

/**
 * Rows a batch prunes by default: SQLite serves every statement on one connection and a batch
 * holds the file's write lock, so a batch there is small (1,000 rows); on PostgreSQL a batch holds
 * only its own rows' locks.
 */
const defaultBatchRows = (driver: string) => (driver === "sqlite" ? 1_000 : 5_000)
const defaultPauseMs = 100

const dayMs = 86_400_000

/** The start of the oldest UTC day kept: `days` whole days before the day of `nowMs`. */
export const cutOf = (nowMs: number, days: number): Date => new Date((Math.floor(nowMs / dayMs) - days) * dayMs)

/** A wait of the machine's time, whatever clock the caller runs on: it lets requests through. */
const pause = (ms: number) =>
  Effect.callback<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

export class LedgerRetention extends Context.Service<LedgerRetention, {
  /** Whole UTC days kept before today. */
  readonly days: number
  /** Prunes every row before the cut, a batch at a time; the number of rows pruned. */
  readonly prune: Effect.Effect<number, StoreUnavailable>
  /** The time before which ledger rows have been pruned; none before the first prune. */
  readonly prunedBefore: Effect.Effect<Option.Option<Date>, StoreUnavailable>
}>()("@switchyard/server/store/LedgerRetention") {
  static readonly layerWith = (options: RetentionOptions) =>
    Layer.effect(LedgerRetention, make(options))

  /**
   * Days from `SWITCHYARD_LEDGER_RETENTION_DAYS` (default 62); pruning on its schedule in one
   * process of the gateway (`Workers.upkeepHere`).
   */
  static readonly layer = Layer.unwrap(Effect.map(RetentionConfig, (days) => LedgerRetention.layerWith({ days, scheduled: Workers.upkeepHere() })))
}

const make = (options: RetentionOptions) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const batchRows = options.batchRows ?? defaultBatchRows(sql.driver)
    const pauseMs = options.pauseMs ?? defaultPauseMs
    // One prune at a time in this process: a call waits for the one under way.
    const running = Semaphore.makeUnsafe(1)

    const batch = (cut: Date) =>
      sql.onDialectOrElse({ pg: () => postgresBatch(cut), orElse: () => sqliteBatch(cut) })

    const postgresBatch = (cut: Date) =>
      sql<{ pruned: number }>`WITH doomed AS (
          SELECT d.generation_id FROM workspaces w CROSS JOIN LATERAL (
            SELECT l.generation_id FROM ledger l
              WHERE l.workspace_id = w.id AND l.created_at < ${cut}
              ORDER BY l.created_at LIMIT ${batchRows} FOR UPDATE SKIP LOCKED) d
          LIMIT ${batchRows}
        ), gone AS (
          DELETE FROM ledger l USING doomed d WHERE l.generation_id = d.generation_id
            RETURNING l.workspace_id, (l.created_at AT TIME ZONE 'UTC')::date AS day, l.key_id, l.model, l.provider, l.is_byok,
              l.prompt_tokens, l.total_tokens, l.cached_items, l.cached_tokens, l.cost_nanos
        ), folded AS (
          INSERT INTO ledger_daily AS r (workspace_id, day, key_id, model, provider, is_byok,
              requests, prompt_tokens, total_tokens, cached_items, cached_tokens, cost_nanos)
            SELECT g.workspace_id, g.day, g.key_id, g.model, g.provider, g.is_byok, count(*), SUM(g.prompt_tokens),
                SUM(g.total_tokens), SUM(g.cached_items), SUM(g.cached_tokens), SUM(g.cost_nanos)
              FROM gone g GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
            ON CONFLICT (workspace_id, day, key_id, model, provider, is_byok) DO UPDATE SET
              requests = r.requests + EXCLUDED.requests, prompt_tokens = r.prompt_tokens + EXCLUDED.prompt_tokens,
              total_tokens = r.total_tokens + EXCLUDED.total_tokens, cached_items = r.cached_items + EXCLUDED.cached_items,
              cached_tokens = r.cached_tokens + EXCLUDED.cached_tokens, cost_nanos = r.cost_nanos + EXCLUDED.cost_nanos
            RETURNING 1
        ), marked AS (
          INSERT INTO ledger_pruned AS p (singleton, before) VALUES (true, ${cut})
            ON CONFLICT (singleton) DO UPDATE SET before = GREATEST(p.before, EXCLUDED.before)
            RETURNING 1
        )
        SELECT count(*)::int AS pruned FROM gone`.pipe(
        Effect.map((rows) => rows[0]?.pruned ?? 0)
      )

    // The same steps in one transaction. The batch is found through `ledger_workspace_time`, each
    // workspace's rows before the cut (no order across workspaces: every row before the cut goes).
    const sqliteBatch = (cut: Date) => {
      const doomed = sql`SELECT l.generation_id FROM ledger l
        WHERE l.workspace_id IN (SELECT id FROM workspaces) AND l.created_at < ${cut} LIMIT ${batchRows}`
      return sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO ledger_daily (workspace_id, day, key_id, model, provider, is_byok,
            requests, prompt_tokens, total_tokens, cached_items, cached_tokens, cost_nanos)
          SELECT g.workspace_id, strftime('%Y-%m-%d', g.created_at / 1000, 'unixepoch'), g.key_id, g.model, g.provider, g.is_byok,
              count(*), SUM(g.prompt_tokens), SUM(g.total_tokens), SUM(g.cached_items), SUM(g.cached_tokens), SUM(g.cost_nanos)
            FROM ledger g WHERE g.generation_id IN (${doomed}) GROUP BY 1, 2, 3, 4, 5, 6
          ON CONFLICT (workspace_id, day, key_id, model, provider, is_byok) DO UPDATE SET
            requests = requests + excluded.requests, prompt_tokens = prompt_tokens + excluded.prompt_tokens,
            total_tokens = total_tokens + excluded.total_tokens, cached_items = cached_items + excluded.cached_items,
            cached_tokens = cached_tokens + excluded.cached_tokens, cost_nanos = cost_nanos + excluded.cost_nanos`
        const gone = yield* sql<{ generation_id: string }>`DELETE FROM ledger WHERE generation_id IN (${doomed}) RETURNING generation_id`
        yield* sql`INSERT INTO ledger_pruned (singleton, before) VALUES (1, ${cut})
          ON CONFLICT (singleton) DO UPDATE SET before = max(before, excluded.before)`
        return gone.length
      }))
    }

    const prune = running.withPermits(1)(Effect.gen(function*() {
      const cut = cutOf(yield* Clock.currentTimeMillis, options.days)
      let total = 0
      while (true) {
        const pruned = yield* batch(cut)
        total += pruned
        if (pruned < batchRows) return total
        yield* pause(pauseMs)
      }
    })).pipe(fromSqlError("ledger.prune"))

    const prunedBefore = sql<{ before: Instant }>`SELECT before FROM ledger_pruned`.pipe(
      fromSqlError("ledger.pruned"),
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (r) => instant(r.before)))
    )

    if (options.scheduled !== false) {
      yield* prune.pipe(
        Span.job("ledger.retention", (pruned) => pruned > 0 ? { "switchyard.ledger.pruned": pruned, "switchyard.ledger.retention_days": options.days } : undefined),
        Effect.tap((pruned) => pruned > 0 ? Effect.logInfo(`ledger retention: pruned ${pruned} rows older than ${options.days} days`) : Effect.void),
        Effect.catchCause((cause) => Effect.logWarning("ledger retention: pruning failed; the next run tries again", cause)),
        Effect.repeat(Schedule.spaced(options.interval ?? Duration.minutes(10))),
        Effect.forkScoped
      )
    }

    return LedgerRetention.of({ days: options.days, prune, prunedBefore })
  })
