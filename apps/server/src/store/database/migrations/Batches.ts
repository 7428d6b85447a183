import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * OpenAI's Files and Batch API: files (metadata, and their bytes as chunks of whole JSONL lines,
 * so every replica reads them and they stream), batches, and each batch's units of lines, the
 * claimable and checkpointed part of its work. Written in the SQL that PostgreSQL and SQLite share:
 * times are epoch milliseconds in `bigint`, JSON is `text`.
 */
export const batches = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE batch_files (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    purpose text NOT NULL,
    filename text NOT NULL,
    bytes bigint NOT NULL,
    lines integer NOT NULL,
    status text NOT NULL,
    created_at bigint NOT NULL
  )`
  yield* sql`CREATE INDEX batch_files_workspace ON batch_files (workspace_id, created_at, id)`
  yield* sql`CREATE TABLE batch_file_chunks (
    file_id text NOT NULL,
    seq integer NOT NULL,
    lines integer NOT NULL,
    data text NOT NULL,
    PRIMARY KEY (file_id, seq)
  )`
  // A chunk is a few hundred KB of text written once and read once: PostgreSQL's default
  // compression of large values costs more CPU than the space it saves here.
  yield* sql.onDialectOrElse({
    pg: () => sql`ALTER TABLE batch_file_chunks ALTER COLUMN data SET STORAGE EXTERNAL`,
    orElse: () => Effect.void
  })
  yield* sql`CREATE TABLE batches (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    key_id text NOT NULL,
    key_hash text NOT NULL,
    user_id text NOT NULL,
    endpoint text NOT NULL,
    input_file_id text NOT NULL,
    completion_window text NOT NULL,
    metadata text,
    status text NOT NULL,
    output_file_id text NOT NULL,
    error_file_id text NOT NULL,
    errors text,
    total integer NOT NULL DEFAULT 0,
    completed integer NOT NULL DEFAULT 0,
    failed integer NOT NULL DEFAULT 0,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    in_progress_at bigint,
    finalizing_at bigint,
    completed_at bigint,
    failed_at bigint,
    expired_at bigint,
    cancelling_at bigint,
    cancelled_at bigint
  )`
  yield* sql`CREATE INDEX batches_workspace ON batches (workspace_id, created_at, id)`
  yield* sql`CREATE INDEX batches_status ON batches (status)`
  yield* sql`CREATE TABLE batch_units (
    batch_id text NOT NULL,
    seq integer NOT NULL,
    input_seq integer NOT NULL,
    line_offset integer NOT NULL,
    first_line integer NOT NULL,
    line_count integer NOT NULL,
    status text NOT NULL,
    claimed_by text,
    claimed_until bigint,
    completed integer NOT NULL DEFAULT 0,
    failed integer NOT NULL DEFAULT 0,
    PRIMARY KEY (batch_id, seq)
  )`
  yield* sql`CREATE INDEX batch_units_claim ON batch_units (status, claimed_until)`
})
