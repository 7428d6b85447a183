/**
 * What admitting a key's request needs to know, read from memory: whether the key still works,
 * and which scopes limit it (its limit, its workspace's budgets, its workspace's prepaid credits).
 *
 * **Details**
 *
 * An Effect `Cache` keyed by key id, each entry kept `ttl` (1 s by default): a change made
 * through another replica reaches this process within it; a change made through this one reaches
 * it at once, because the writer calls {@link MoneyFacts.forget}. `signature` changes with any
 * limit, budget or switch, so a lease granted under other facts is handed back before it is used
 * again.
 */
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { fromSqlError } from "@switchyard/core/store/StoreUnavailable"
import { Cache, Duration, Effect, Exit, Option, Schema } from "effect"
import type { SqlClient } from "effect/sql"

export interface MoneyFacts {
  readonly workspaceId: string
  readonly deleted: boolean
  readonly disabled: boolean
  readonly expiresAtMs: number | null
  readonly limitNanos: bigint | null
  readonly limitReset: string | null
  readonly includeByokInLimit: boolean
  /** `interval=limit,...` of the workspace's budgets, `null` without any. */
  readonly budgets: string | null
  readonly includeByokInBudgets: boolean
  readonly prepaid: boolean
  /** Every fact that sizes a lease, as one string. */
  readonly signature: string
}

/** A boolean as either store returns it: PostgreSQL's `boolean`, SQLite's 0/1. */
const Flag = Schema.Union([Schema.Boolean, Schema.Literals([0, 1])])
const flag = (value: boolean | 0 | 1): boolean => value === true || value === 1

const FactsRow = Schema.Struct({
  workspace_id: Schema.String,
  deleted: Flag,
  disabled: Flag,
  // PostgreSQL's timestamptz, or SQLite's epoch milliseconds.
  expires_at: Schema.NullOr(Schema.Union([Schema.Date, Schema.String, Schema.Number])),
  limit_nanos: Schema.NullOr(Schema.String),
  limit_reset: Schema.NullOr(Schema.String),
  include_byok_in_limit: Flag,
  budgets: Schema.NullOr(Schema.String),
  include_byok_in_budgets: Flag,
  prepaid: Flag
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(FactsRow))

/**
 * Whether a request (BYOK or not) draws from a scope that can refuse it, so that it needs a lease.
 */
export const limited = (facts: MoneyFacts, byok: boolean): boolean =>
  (facts.limitNanos !== null && (!byok || facts.includeByokInLimit)) ||
  (facts.budgets !== null && (!byok || facts.includeByokInBudgets)) ||
  (facts.prepaid && !byok)

interface MoneyFactsCache {
  /** `None` for a key that does not exist. */
  readonly of: (keyId: string) => Effect.Effect<Option.Option<MoneyFacts>, StoreUnavailable>
  readonly forget: (keyId: string) => Effect.Effect<void>
  readonly forgetAll: Effect.Effect<void>
}

export const make = (sql: SqlClient.SqlClient, ttl: Duration.Input) =>
  Effect.gen(function*() {
    // The one difference between the dialects: the name of the ordered string aggregate.
    const budgets = sql.onDialectOrElse({
      sqlite: () => sql.literal("group_concat(b.interval || '=' || CAST(b.limit_nanos AS text), ',' ORDER BY b.interval)"),
      orElse: () => sql.literal("string_agg(b.interval || '=' || CAST(b.limit_nanos AS text), ',' ORDER BY b.interval)")
    })
    const load = (keyId: string) =>
      sql`SELECT k.workspace_id, CASE WHEN k.deleted_at IS NULL THEN 0 ELSE 1 END AS deleted, k.disabled, k.expires_at,
          CAST(k.limit_nanos AS text) AS limit_nanos, k.limit_reset, k.include_byok_in_limit,
          (SELECT ${budgets} FROM workspace_budgets b WHERE b.workspace_id = k.workspace_id) AS budgets,
          w.include_byok_in_budgets, COALESCE(a.prepaid, ${false}) AS prepaid
        FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
        LEFT JOIN credit_accounts a ON a.workspace_id = k.workspace_id
        WHERE k.id = ${keyId}`.pipe(
        fromSqlError("keys.money_facts"),
        Effect.flatMap((rows) => decodeRows(rows).pipe(Effect.orDie)), // the query's own shape: a mismatch is a bug
        Effect.map((rows) =>
          Option.map(Option.fromUndefinedOr(rows[0]), (row): MoneyFacts => {
            const expiresAtMs = row.expires_at === null ? null : new Date(row.expires_at).getTime()
            const facts = {
              workspaceId: row.workspace_id,
              deleted: flag(row.deleted),
              disabled: flag(row.disabled),
              expiresAtMs,
              limitNanos: row.limit_nanos === null ? null : BigInt(row.limit_nanos),
              limitReset: row.limit_reset,
              includeByokInLimit: flag(row.include_byok_in_limit),
              budgets: row.budgets,
              includeByokInBudgets: flag(row.include_byok_in_budgets),
              prepaid: flag(row.prepaid)
            }
            return {
              ...facts,
              signature: [facts.limitNanos, facts.limitReset, facts.includeByokInLimit, facts.budgets, facts.includeByokInBudgets,
                facts.prepaid, facts.disabled, facts.deleted, expiresAtMs].join("|")
            }
          })
        )
      )
    const cache = yield* Cache.makeWith(load, {
      capacity: 100_000,
      // A failed read is not kept: the next request asks again.
      timeToLive: (exit) => (Exit.isSuccess(exit) ? ttl : Duration.zero)
    })
    return {
      of: (keyId) => Cache.get(cache, keyId),
      forget: (keyId) => Cache.invalidate(cache, keyId),
      forgetAll: Cache.invalidateAll(cache)
    } satisfies MoneyFactsCache
  })
