import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { ChunkRow } from "./FileChunks.ts"

/**
 * The statements a batch's units (BatchStore.ts) and its provider batches (ProviderBatchStore.ts)
 * both write their lines with: a chunk of the batch's output or error file, the files' ids, and
 * the lines' counts and cost added to the batch's.
 */

/** Writes a chunk of a file once (a chunk written before stays as it is). */
export const insertChunk = (sql: SqlClient.SqlClient, fileId: string, chunk: ChunkRow) =>
  sql`INSERT INTO batch_file_chunks (file_id, seq, lines, data)
    VALUES (${fileId}, ${chunk.seq}, ${chunk.lines}, ${chunk.data})
    ON CONFLICT (file_id, seq) DO NOTHING`.pipe(Effect.asVoid)

/** The ids of a batch's output and error files, if the batch is there. */
export const filesOf = (sql: SqlClient.SqlClient, batchId: string) =>
  Effect.map(
    sql<{ readonly output_file_id: string; readonly error_file_id: string }>`SELECT output_file_id, error_file_id
      FROM batches WHERE id = ${batchId}`,
    (rows) => rows[0]
  )

/** Adds lines written (served and failed) and what the served cost to the batch's counts. */
export const addCounts = (
  sql: SqlClient.SqlClient,
  batchId: string,
  counts: { readonly completed: number; readonly failed: number; readonly costNanos: bigint }
) =>
  sql`UPDATE batches SET completed = completed + ${counts.completed}, failed = failed + ${counts.failed},
      cost_nanos = cost_nanos + ${counts.costNanos} WHERE id = ${batchId}`.pipe(Effect.asVoid)
