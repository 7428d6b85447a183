import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { byokCredentialsColumns, creditGrantsColumns, holdsColumns } from "./SharedColumns.ts"

/**
 * Credit accounts and grants, reservation holds, BYOK credentials, and soft deletion of keys
 * (their ledger rows must outlive them).
 */
export const money = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN deleted_at timestamptz`
  yield* sql`CREATE TABLE credit_accounts (
    workspace_id text PRIMARY KEY REFERENCES workspaces(id),
    credits_nanos bigint NOT NULL DEFAULT 0 CHECK (credits_nanos >= 0),
    usage_nanos bigint NOT NULL DEFAULT 0 CHECK (usage_nanos >= 0),
    updated_at timestamptz
  )`
  yield* sql`CREATE TABLE credit_grants (
    ${sql.literal(creditGrantsColumns)},
    amount_nanos bigint NOT NULL CHECK (amount_nanos > 0),
    note text,
    granted_by_key_id text REFERENCES api_keys(id),
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE holds (
    ${sql.literal(holdsColumns)},
    amount_nanos bigint NOT NULL CHECK (amount_nanos > 0),
    is_byok boolean NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX holds_key ON holds (key_id, expires_at)`
  yield* sql`CREATE INDEX holds_workspace ON holds (workspace_id, expires_at)`
  yield* sql`CREATE INDEX holds_expiry ON holds (expires_at)`
  yield* sql`CREATE INDEX ledger_workspace_time ON ledger (workspace_id, created_at)`
  yield* sql`CREATE TABLE byok_credentials (
    ${sql.literal(byokCredentialsColumns)},
    disabled boolean NOT NULL DEFAULT false,
    sort_order integer NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz
  )`
  yield* sql`CREATE INDEX byok_credentials_lookup ON byok_credentials (workspace_id, provider, sort_order)`
})
