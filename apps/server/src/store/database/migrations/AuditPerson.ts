import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * An audit entry made through a single sign-on session names the person (`{ sub, email, name }` as
 * JSON text) and the session. Entries before (and those made with a key) keep both `NULL`, and
 * their hash covers what it always did (core's `AuditChain.canonical`).
 */
export const auditPerson = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE audit_log ADD COLUMN actor_user text`
  yield* sql`ALTER TABLE audit_log ADD COLUMN actor_session_id text`
})
