import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The workspace API's embeddings cache switch: `workspaces.cache` is `true` or `false` when a
 * management key set it, `NULL` when the config file's `workspaces.<slug>.cache` decides (the
 * default for every existing workspace). Adding a nullable column changes nothing for a replica
 * of the previous version, which neither reads nor writes it.
 */
export const workspaceCache = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE workspaces ADD COLUMN cache boolean`
})
