import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { internsColumns } from "./SharedColumns.ts"

/**
 * The interns table: one row per intern, its settings, its lifecycle state and its current run.
 */
export const interns = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE interns (
    ${sql.literal(internsColumns)},
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CHECK ((progress_label IS NULL) = (progress_step IS NULL) AND (progress_step IS NULL) = (progress_total IS NULL))
  )`
  yield* sql`CREATE UNIQUE INDEX interns_creator_name ON interns (workspace_id, creator_user_id, name)`
  yield* sql`CREATE INDEX interns_workspace_status ON interns (workspace_id, status, id)`
})
