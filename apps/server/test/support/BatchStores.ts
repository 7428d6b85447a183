import { Clock, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { type BatchRow, BatchStore } from "../../src/store/batches/BatchStore.ts"
import { migrate } from "../../src/store/database/Migrations.ts"
import * as SqliteClient from "../../src/store/sqlite/SqliteClient.ts"
import { tempDir } from "./TestServer.ts"

/** A migrated SQLite store in a file of its own, removed with the scope, and the batch store on it. */
export const store = Layer.unwrap(Effect.gen(function*() {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => tempDir("batch-expiry")),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )
  return BatchStore.layer.pipe(
    Layer.provideMerge(Layer.effectDiscard(migrate)),
    Layer.provideMerge(SqliteClient.layer(NodePath.join(dir, "switchyard.db")))
  )
}))

export const window = Duration.toMillis(Duration.hours(24))

export const newBatch = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT OR IGNORE INTO workspaces (id, slug, name) VALUES ('w', 'w', 'W')`
    const now = yield* Clock.currentTimeMillis
    const row: BatchRow = {
      id,
      workspace_id: "w",
      key_id: "k",
      key_hash: "h",
      user_id: "u",
      endpoint: "/v1/embeddings",
      input_file_id: "file-in",
      completion_window: "24h",
      execution: "auto",
      metadata: null,
      status: "validating",
      output_file_id: `file-out-${id}`,
      error_file_id: `file-err-${id}`,
      errors: null,
      total: 0,
      completed: 0,
      failed: 0,
      cost_nanos: 0,
      created_at: now,
      expires_at: now + window,
      in_progress_at: null,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null
    }
    yield* (yield* BatchStore).insertBatch(row)
  })
