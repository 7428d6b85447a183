import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Ledger retention: per-request rows older than the retention are folded into daily rollups and
 * deleted (`LedgerRetention.ts` runs it); the embeddings cache's table gains the index its eviction
 * walks.
 *
 * **Details**
 *
 * - `ledger_daily`: per workspace, UTC day, key, model, provider and BYOK-ness, the sums of the
 *   ledger rows pruned: requests, tokens (the upstream's and the cached ones), cached items, cost.
 *   A pruned row's amounts enter it in the statement that deletes the row, so a report that reads
 *   both (`/activity`) sums every request exactly once. The primary key leads with the workspace
 *   and the day: the report reads one workspace's range of days.
 * - `ledger_pruned`: one row, the time before which ledger rows have been pruned. `GET
 *   /generation` tells a generation past retention (its id's time is earlier) from an unknown id.
 * - `effect_persistence_embedding_cache`: the table Effect's SQL persistence keeps the embeddings
 *   cache in (its own shape, created here ahead of the library, which creates it only if absent),
 *   with an index on `(expires, id)`: eviction takes the entries that expire first, a batch at a
 *   time, from the index's start.
 */
export const ledgerRetention = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE ledger_daily (
    workspace_id text NOT NULL REFERENCES workspaces(id),
    day date NOT NULL,
    key_id text NOT NULL REFERENCES api_keys(id),
    model text NOT NULL,
    provider text NOT NULL,
    is_byok boolean NOT NULL,
    requests bigint NOT NULL CHECK (requests >= 0),
    prompt_tokens bigint NOT NULL,
    total_tokens bigint NOT NULL,
    cached_items bigint NOT NULL,
    cached_tokens bigint NOT NULL,
    cost_nanos bigint NOT NULL CHECK (cost_nanos >= 0),
    PRIMARY KEY (workspace_id, day, key_id, model, provider, is_byok)
  )`
  yield* sql`CREATE TABLE ledger_pruned (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    before timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE IF NOT EXISTS effect_persistence_embedding_cache (
    id TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires BIGINT
  )`
  yield* sql`CREATE INDEX IF NOT EXISTS embedding_cache_expires ON effect_persistence_embedding_cache (expires, id)`
})
