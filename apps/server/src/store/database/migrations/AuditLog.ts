import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { genesis } from "@switchyard/core/audit/AuditChain"

/**
 * The audit log of management actions (store/audit/AuditLog.ts), append-only and hash-chained, and its
 * one-row head (the last entry's id and hash): every append updates the head first, which
 * serialises appends on PostgreSQL (the row lock) and on SQLite (the writer lock) alike. Written
 * in the common subset of PostgreSQL and SQLite: times in epoch milliseconds, JSON as text.
 */
export const auditLog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE audit_log (
    id bigint PRIMARY KEY,
    at bigint NOT NULL,
    actor_key_hash text,
    actor_key_name text,
    actor_user_id text,
    workspace_id text,
    action text NOT NULL,
    target_type text NOT NULL,
    target_id text NOT NULL,
    before_json text,
    after_json text,
    ip text,
    request_id text,
    prev_hash text NOT NULL,
    hash text NOT NULL
  )`
  yield* sql`CREATE INDEX audit_log_workspace ON audit_log (workspace_id, id)`
  yield* sql`CREATE INDEX audit_log_at ON audit_log (at)`
  yield* sql`CREATE TABLE audit_head (
    id integer PRIMARY KEY,
    seq bigint NOT NULL,
    hash text NOT NULL
  )`
  yield* sql`INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, ${genesis})`
})
