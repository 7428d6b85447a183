import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * What `GET /generation` and the routing of a workspace read, kept as JSON text in nullable
 * columns (the same statements on PostgreSQL and SQLite; a replica of the previous version
 * neither reads nor writes them).
 *
 * **Details**
 *
 * - `ledger.attempts`: the request's upstream calls in order (`AttemptRecord`: provider,
 *   endpoint, status, failure reason, latency, the provider's id of its answer); `[]` when the
 *   cache answered it whole; `NULL` for rows written before.
 * - `workspaces.routing`: the account-wide provider preferences a management key set for the
 *   workspace (`only`, `ignore`, `data_collection`, `zdr`), over the config file's; `NULL` when
 *   none was set.
 */
export const generationAttempts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE ledger ADD COLUMN attempts text`
  yield* sql`ALTER TABLE workspaces ADD COLUMN routing text`
})
