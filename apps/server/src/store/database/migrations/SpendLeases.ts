import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Spend leases and ledger rows written in batches.
 *
 * **Details**
 *
 * - A lease is a hold owned by a gateway process (`holds.owner`), counted like any hold against the
 *   key's limit, the workspace's budgets and its credits. Its amount may now reach 0 (a lease whose
 *   every charge was written and nothing else is admitted yet), hence the relaxed check.
 *
 * The functions that grant, return and flush (`switchyard_lease`, `switchyard_lease_return`,
 * `switchyard_flush`) are defined in `MoneyFunctions.ts` and created by `0011_money_functions`.
 */
export const spendLeases = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE holds DROP CONSTRAINT holds_amount_nanos_check`
  yield* sql`ALTER TABLE holds ADD CONSTRAINT holds_amount_nanos_check CHECK (amount_nanos >= 0)`
})
