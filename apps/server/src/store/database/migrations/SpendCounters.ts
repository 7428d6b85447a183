import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Per-key spend counters, the owner of a hold, and the registry of gateway processes.
 *
 * **Details**
 *
 * `key_spend` holds, per key and UTC day, the non-BYOK and the BYOK nanos the ledger charged
 * that day; the row dated `-infinity` holds the key's all-time totals. A limit window is then a
 * sum over at most 31 day rows (or the one total row for a key without a reset), whatever the
 * size of the ledger, and changing a key's `limit_reset` needs no recomputation. The counters
 * move with every ledger row written (`switchyard_flush`) and are backfilled here from the ledger
 * rows written before. The money functions that read and write them are in `MoneyFunctions.ts`.
 */
export const spendCounters = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE key_spend (
    key_id text NOT NULL REFERENCES api_keys(id),
    day date NOT NULL,
    spent_nanos bigint NOT NULL DEFAULT 0 CHECK (spent_nanos >= 0),
    byok_nanos bigint NOT NULL DEFAULT 0 CHECK (byok_nanos >= 0),
    PRIMARY KEY (key_id, day)
  )`
  yield* sql`INSERT INTO key_spend (key_id, day, spent_nanos, byok_nanos)
    SELECT key_id, (created_at AT TIME ZONE 'UTC')::date,
        COALESCE(SUM(cost_nanos) FILTER (WHERE NOT is_byok), 0), COALESCE(SUM(cost_nanos) FILTER (WHERE is_byok), 0)
      FROM ledger WHERE cost_nanos > 0 GROUP BY 1, 2
    UNION ALL
    SELECT key_id, '-infinity'::date,
        COALESCE(SUM(cost_nanos) FILTER (WHERE NOT is_byok), 0), COALESCE(SUM(cost_nanos) FILTER (WHERE is_byok), 0)
      FROM ledger WHERE cost_nanos > 0 GROUP BY 1`
  yield* sql`ALTER TABLE holds ADD COLUMN owner text`
  yield* sql`CREATE INDEX holds_owner ON holds (owner)`
  yield* sql`CREATE TABLE gateway_processes (
    id text PRIMARY KEY,
    started_at timestamptz NOT NULL,
    seen_at timestamptz NOT NULL
  )`
})
