import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * What a management key reaches: `user` (every workspace its user is a member of, decision 0165,
 * the default and what every key minted before had) or `workspace` (its own workspace only).
 * Standard keys keep `user` in the column and reach their own workspace whatever it says. The
 * same statement on both stores.
 */
export const managementKeyScope = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT 'user' CHECK (scope IN ('user', 'workspace'))`
})
