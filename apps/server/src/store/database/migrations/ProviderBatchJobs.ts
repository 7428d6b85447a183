import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Provider batches of every batch API: what a job is made with besides its input (`job`, JSON of
 * the upstream model and the parameters some providers take per job), and when the files the
 * gateway uploaded for it (and the provider wrote) were deleted (`cleaned_at`, epoch ms; NULL
 * while some may remain). The SQL PostgreSQL and SQLite share.
 */
export const providerBatchJobs = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE provider_batches ADD COLUMN job text`
  yield* sql`ALTER TABLE provider_batches ADD COLUMN cleaned_at bigint`
})
