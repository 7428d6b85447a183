import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { spendTable } from "./SpendTable.ts"

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
  yield* spendTable({ table: "key_spend", owner: "key_id", ownerTable: "api_keys" })
  yield* sql`ALTER TABLE holds ADD COLUMN owner text`
  yield* sql`CREATE INDEX holds_owner ON holds (owner)`
  yield* sql`CREATE TABLE gateway_processes (
    id text PRIMARY KEY,
    started_at timestamptz NOT NULL,
    seen_at timestamptz NOT NULL
  )`
})
