import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Provider batches: the lines of a batch unit that the gateway sends through a provider's own
 * batch API (one provider batch per unit and endpoint), with the provider's file and batch ids
 * kept so that a restart polls the provider batch instead of submitting it again; and on each
 * batch, whether its creator asked for live execution only and how many provider batches it has
 * (their output chunks are numbered after the units'). The SQL PostgreSQL and SQLite share:
 * epoch milliseconds in `bigint`, JSON as `text`.
 */
export const providerBatches = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE batches ADD COLUMN execution text NOT NULL DEFAULT 'auto'`
  yield* sql`ALTER TABLE batches ADD COLUMN provider_batches integer NOT NULL DEFAULT 0`
  yield* sql`CREATE TABLE provider_batches (
    batch_id text NOT NULL,
    seq integer NOT NULL,
    unit_seq integer NOT NULL,
    input_seq integer NOT NULL,
    line_offset integer NOT NULL,
    first_line integer NOT NULL,
    lines text NOT NULL,
    api text NOT NULL,
    provider text NOT NULL,
    endpoint text NOT NULL,
    requests text,
    status text NOT NULL,
    upstream_file_id text,
    upstream_batch_id text,
    upstream_status text,
    failures integer NOT NULL DEFAULT 0,
    claimed_by text,
    claimed_until bigint,
    next_poll_at bigint NOT NULL,
    cancel_sent_at bigint,
    created_at bigint NOT NULL,
    PRIMARY KEY (batch_id, seq)
  )`
  yield* sql`CREATE INDEX provider_batches_due ON provider_batches (status, next_poll_at)`
})
