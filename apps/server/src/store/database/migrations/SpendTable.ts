import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A spend counter table, as `0004_spend_counters` made `key_spend` (per key) and
 * `0007_workspace_budgets` made `workspace_spend` (per workspace): per owner and UTC day, the
 * non-BYOK and the BYOK nanos the ledger charged that day, the row dated `-infinity` the all-time
 * totals; backfilled from the ledger rows written before.
 *
 * **Gotchas**
 *
 * Migrations are history: these are the statements both migrations ran, to the byte (the names
 * go in as literal text, unquoted, where the statements named them). Change nothing here; a new
 * shape is a new migration.
 */
export const spendTable = (names: {
  readonly table: "key_spend" | "workspace_spend"
  readonly owner: "key_id" | "workspace_id"
  readonly ownerTable: "api_keys" | "workspaces"
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [table, owner, ownerTable] = [sql.literal(names.table), sql.literal(names.owner), sql.literal(names.ownerTable)]
    yield* sql`CREATE TABLE ${table} (
    ${owner} text NOT NULL REFERENCES ${ownerTable}(id),
    day date NOT NULL,
    spent_nanos bigint NOT NULL DEFAULT 0 CHECK (spent_nanos >= 0),
    byok_nanos bigint NOT NULL DEFAULT 0 CHECK (byok_nanos >= 0),
    PRIMARY KEY (${owner}, day)
  )`
    yield* sql`INSERT INTO ${table} (${owner}, day, spent_nanos, byok_nanos)
    SELECT ${owner}, (created_at AT TIME ZONE 'UTC')::date,
        COALESCE(SUM(cost_nanos) FILTER (WHERE NOT is_byok), 0), COALESCE(SUM(cost_nanos) FILTER (WHERE is_byok), 0)
      FROM ledger WHERE cost_nanos > 0 GROUP BY 1, 2
    UNION ALL
    SELECT ${owner}, '-infinity'::date,
        COALESCE(SUM(cost_nanos) FILTER (WHERE NOT is_byok), 0), COALESCE(SUM(cost_nanos) FILTER (WHERE is_byok), 0)
      FROM ledger WHERE cost_nanos > 0 GROUP BY 1`
  })
