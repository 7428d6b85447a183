import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The interns table: one row per intern, its settings, its lifecycle state and its current run.
 */
export const interns = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE interns (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    creator_user_id text NOT NULL REFERENCES users(id),
    name text NOT NULL,
    description text,
    instructions text,
    model text,
    status text NOT NULL CHECK (status IN ('awaiting_slack_install', 'queued', 'provisioning', 'running',
      'failed', 'stopped', 'destroying', 'destroy_failed')),
    hostname text,
    progress_label text,
    progress_step integer,
    progress_total integer,
    last_failure_message text,
    vault_id text UNIQUE,
    attached_vault_id text,
    run_id text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CHECK ((progress_label IS NULL) = (progress_step IS NULL) AND (progress_step IS NULL) = (progress_total IS NULL))
  )`
  yield* sql`CREATE UNIQUE INDEX interns_creator_name ON interns (workspace_id, creator_user_id, name)`
  yield* sql`CREATE INDEX interns_workspace_status ON interns (workspace_id, status, id)`
})
