import { fromSqlError } from "@switchyard/core/store/StoreUnavailable"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { flag, type Flag, type Instant, instant } from "../sql/Columns.ts"

/** One ledger row with what `GET /generation` reports beside it. */
export interface GenerationRow {
  readonly generationId: string
  readonly workspaceId: string
  readonly model: string
  readonly provider: string
  /** What the upstream counted (and charged for). */
  readonly promptTokens: number
  readonly totalTokens: number
  /** Input items the embeddings cache served, and the prompt tokens they were first billed for. */
  readonly cachedItems: number
  readonly cachedTokens: number
  readonly costNanos: bigint
  readonly isByok: boolean
  readonly latencyMs: number | null
  readonly createdAt: Date
  readonly externalUser: string | null
  /** The request's upstream attempts as stored (`AttemptRecord` JSON); null for rows written before they were. */
  readonly attempts: string | null
}

/** One day's sums for one model at one provider (and workspace, when split by workspace). */
export interface ActivityRow {
  readonly day: string
  readonly workspaceId: string
  readonly model: string
  readonly provider: string
  readonly requests: number
  /** Prompt tokens, the cached ones included. */
  readonly promptTokens: number
  /** The part of `promptTokens` the embeddings cache answered. */
  readonly cachedTokens: number
  readonly costNanos: bigint
  readonly byokNanos: bigint
}

export interface ActivityFilter {
  readonly workspaceId: string
  /** First and last UTC day included, `YYYY-MM-DD`. */
  readonly fromDay: string
  readonly toDay: string
  readonly keyHash?: string | undefined
  readonly userId?: string | undefined
}

/**
 * Reads of the ledger: one generation, and daily sums by model and provider. Sums are taken in
 * SQL over exact nano-dollars and cross the driver as text. The daily sums add the rollups of the
 * rows pruned past retention (`ledger_daily`, see `LedgerRetention.ts`) to the live rows': a row
 * is in one or the other, never both.
 */
export class LedgerReports extends Context.Service<LedgerReports, {
  /** The generation, when it belongs to one of these workspaces and was not pruned. */
  readonly generation: (generationId: string, workspaceIds: ReadonlyArray<string>) => Effect.Effect<Option.Option<GenerationRow>, StoreUnavailable>
  readonly activity: (filter: ActivityFilter) => Effect.Effect<ReadonlyArray<ActivityRow>, StoreUnavailable>
}>()("@switchyard/server/store/LedgerReports") {
  static readonly layer = Layer.effect(
    LedgerReports,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const generation = (generationId: string, workspaceIds: ReadonlyArray<string>) =>
        workspaceIds.length === 0 ? Effect.succeed(Option.none<GenerationRow>()) : sql<{
          generation_id: string
          workspace_id: string
          model: string
          provider: string
          prompt_tokens: number
          total_tokens: number
          cached_items: number
          cached_tokens: number
          cost_nanos: string
          is_byok: Flag
          latency_ms: number | null
          created_at: Instant
          external_user: string | null
          attempts: string | null
        }>`SELECT l.generation_id, l.workspace_id, l.model, l.provider, l.prompt_tokens, l.total_tokens,
            l.cached_items, l.cached_tokens, CAST(l.cost_nanos AS text) AS cost_nanos, l.is_byok, l.latency_ms, l.created_at, k.external_user,
            l.attempts
          FROM ledger l JOIN api_keys k ON k.id = l.key_id
          WHERE l.generation_id = ${generationId} AND l.workspace_id IN ${sql.in(workspaceIds)}`.pipe(
          fromSqlError("ledger"),
          Effect.map((rows) =>
            Option.map(Option.fromNullishOr(rows[0]), (r): GenerationRow => ({
              generationId: r.generation_id,
              workspaceId: r.workspace_id,
              model: r.model,
              provider: r.provider,
              promptTokens: Number(r.prompt_tokens),
              totalTokens: Number(r.total_tokens),
              cachedItems: Number(r.cached_items),
              cachedTokens: Number(r.cached_tokens),
              costNanos: BigInt(r.cost_nanos),
              isByok: flag(r.is_byok),
              latencyMs: r.latency_ms === null ? null : Number(r.latency_ms),
              createdAt: instant(r.created_at),
              externalUser: r.external_user,
              attempts: r.attempts
            }))
          )
        )

      // A row's UTC day, and a day as `YYYY-MM-DD` text: PostgreSQL has dates, SQLite keeps the
      // epoch milliseconds and the day's text (see `store/database/migrations/SqliteBaseline.ts`).
      const dayOf = (column: string) =>
        sql.onDialectOrElse({
          pg: () => sql`(${sql(column)} AT TIME ZONE 'UTC')::date`,
          orElse: () => sql`strftime('%Y-%m-%d', ${sql(column)} / 1000, 'unixepoch')`
        })
      const dayText = (column: string) =>
        sql.onDialectOrElse({ pg: () => sql`to_char(${sql(column)}, 'YYYY-MM-DD')`, orElse: () => sql`${sql(column)}` })
      const dayStart = (day: string) => new Date(`${day}T00:00:00.000Z`)

      const activity = (filter: ActivityFilter) =>
        sql<{
          day: string
          workspace_id: string
          model: string
          provider: string
          requests: number
          prompt_tokens: string
          cached_tokens: string
          cost_nanos: string
          byok_nanos: string
        }>`SELECT ${dayText("u.day")} AS day, u.workspace_id, u.model, u.provider,
            CAST(SUM(u.requests) AS integer) AS requests, CAST(SUM(u.prompt_tokens) AS text) AS prompt_tokens,
            CAST(SUM(u.cached_tokens) AS text) AS cached_tokens,
            CAST(SUM(u.cost_nanos) AS text) AS cost_nanos, CAST(SUM(u.byok_nanos) AS text) AS byok_nanos
          FROM (
            SELECT ${dayOf("l.created_at")} AS day, l.workspace_id, l.model, l.provider,
                count(*) AS requests, SUM(l.prompt_tokens + l.cached_tokens) AS prompt_tokens, SUM(l.cached_tokens) AS cached_tokens,
                COALESCE(SUM(CASE WHEN l.is_byok THEN 0 ELSE l.cost_nanos END), 0) AS cost_nanos,
                COALESCE(SUM(CASE WHEN l.is_byok THEN l.cost_nanos ELSE 0 END), 0) AS byok_nanos
              FROM ledger l JOIN api_keys k ON k.id = l.key_id
              WHERE l.workspace_id = ${filter.workspaceId}
                AND l.created_at >= ${dayStart(filter.fromDay)}
                AND l.created_at < ${new Date(dayStart(filter.toDay).getTime() + 86_400_000)}
                AND (CAST(${filter.keyHash ?? null} AS text) IS NULL OR k.hash = ${filter.keyHash ?? null})
                AND (CAST(${filter.userId ?? null} AS text) IS NULL OR k.user_id = ${filter.userId ?? null})
              GROUP BY 1, 2, 3, 4
            UNION ALL
            SELECT r.day, r.workspace_id, r.model, r.provider,
                SUM(r.requests), SUM(r.prompt_tokens + r.cached_tokens), SUM(r.cached_tokens),
                COALESCE(SUM(CASE WHEN r.is_byok THEN 0 ELSE r.cost_nanos END), 0),
                COALESCE(SUM(CASE WHEN r.is_byok THEN r.cost_nanos ELSE 0 END), 0)
              FROM ledger_daily r JOIN api_keys k ON k.id = r.key_id
              WHERE r.workspace_id = ${filter.workspaceId}
                AND r.day >= ${filter.fromDay} AND r.day <= ${filter.toDay}
                AND (CAST(${filter.keyHash ?? null} AS text) IS NULL OR k.hash = ${filter.keyHash ?? null})
                AND (CAST(${filter.userId ?? null} AS text) IS NULL OR k.user_id = ${filter.userId ?? null})
              GROUP BY 1, 2, 3, 4
          ) u
          GROUP BY u.day, u.workspace_id, u.model, u.provider
          ORDER BY u.day DESC, u.model, u.provider`.pipe(
          fromSqlError("ledger"),
          Effect.map((rows) =>
            rows.map((r): ActivityRow => ({
              day: r.day,
              workspaceId: r.workspace_id,
              model: r.model,
              provider: r.provider,
              requests: Number(r.requests),
              promptTokens: Number(r.prompt_tokens),
              cachedTokens: Number(r.cached_tokens),
              costNanos: BigInt(r.cost_nanos),
              byokNanos: BigInt(r.byok_nanos)
            }))
          )
        )

      return LedgerReports.of({ generation, activity })
    })
  )
}
