import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * What a batch's served lines cost so far, in nano-dollars: each unit adds its lines' costs in the
 * transaction that writes their output lines, so the sum is that of the ledger rows of the lines in
 * the output. The same statement on both stores.
 */
export const batchCost = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE batches ADD COLUMN cost_nanos bigint NOT NULL DEFAULT 0`
})
