import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The audit log refuses changes to its past entries: an `UPDATE` or `DELETE` of `audit_log` (and a
 * `TRUNCATE` on PostgreSQL) fails in the store itself, whatever client sends it. Whoever owns the
 * database can still drop the triggers; the chain's check (observability/AuditWatch.ts) finds what
 * was changed then.
 */
export const auditAppendOnly = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    sqlite: () =>
      Effect.gen(function*() {
        yield* sql`CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
          BEGIN SELECT RAISE(ABORT, 'audit_log entries are append-only'); END`
        yield* sql`CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
          BEGIN SELECT RAISE(ABORT, 'audit_log entries are append-only'); END`
      }),
    orElse: () =>
      Effect.gen(function*() {
        yield* sql.unsafe(`CREATE FUNCTION audit_log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'audit_log entries are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege'; END
          $$`)
        yield* sql.unsafe(`CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
          FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_change()`)
        yield* sql.unsafe(`CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
          FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse_change()`)
      })
  })
})
