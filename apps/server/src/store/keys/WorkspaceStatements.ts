/**
 * The reads of a workspace's row that the edge and the pipeline make on every request (whether it
 * is the instance's `default`, its slug and its own settings), kept a few seconds by their callers.
 */
import { fromSqlError } from "@switchyard/core/store/StoreUnavailable"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Flag } from "../sql/Columns.ts"

/** A workspace's slug and the settings a management key stored over the config file's. */
export interface SettingsRow {
  readonly slug: string
  readonly cache: Flag | null
  readonly routing: string | null
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    /** Whether `workspaceId` is the live workspace `default` (whose management keys administer the instance). */
    isDefault: (workspaceId: string) =>
      sql<{ id: string }>`SELECT id FROM workspaces WHERE id = ${workspaceId} AND slug = 'default'
        AND deleted_at IS NULL`.pipe(Effect.map((rows) => rows.length > 0), fromSqlError("administrators")),
    /** The workspace's slug and stored settings; `undefined` for an unknown id. */
    settings: (workspaceId: string) =>
      sql<SettingsRow>`SELECT slug, cache, routing FROM workspaces WHERE id = ${workspaceId}`.pipe(
        fromSqlError("workspaces.settings"),
        Effect.map((rows) => rows[0])
      )
  }
})
