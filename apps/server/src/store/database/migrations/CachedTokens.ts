import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Embeddings served from the cache in the ledger.
 *
 * **Details**
 *
 * - `ledger.cached_items` and `ledger.cached_tokens`: how many input items the embeddings cache
 *   served and the prompt tokens those items were billed for when they were first embedded.
 *   `prompt_tokens` and `total_tokens` stay what the upstream counted (and charged for); the
 *   cost, key usage, budgets and credits grow only by that.
 */
export const cachedTokens = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE ledger
    ADD COLUMN cached_items integer NOT NULL DEFAULT 0 CHECK (cached_items >= 0),
    ADD COLUMN cached_tokens integer NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0)`
})
