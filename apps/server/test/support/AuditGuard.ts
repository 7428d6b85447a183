import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** What a database owner can do: drop the triggers that keep `audit_log` append-only. */
export const dropAppendOnly = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.onDialectOrElse({
    sqlite: () => Effect.andThen(sql`DROP TRIGGER audit_log_no_update`, sql`DROP TRIGGER audit_log_no_delete`),
    orElse: () => Effect.andThen(sql`DROP TRIGGER audit_log_append_only ON audit_log`, sql`DROP TRIGGER audit_log_no_truncate ON audit_log`)
  }))
