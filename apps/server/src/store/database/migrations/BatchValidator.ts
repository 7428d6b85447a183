import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The process that validates a new batch (`GatewayProcess` id): one validator per batch, whatever
 * the number of replicas and workers; another takes over once that process is judged dead. The
 * same statement on both stores.
 */
export const batchValidator = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE batches ADD COLUMN validator text`
})
