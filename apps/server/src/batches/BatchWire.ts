import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import type * as Batch from "@switchyard/core/schema/Batch"
import type { BatchRow, FileRow } from "../store/BatchStore.ts"

/**
 * Rows as OpenAI's objects: times in unix seconds, an absent file id as `null`.
 */

const seconds = (ms: number | string) => Math.floor(Number(ms) / 1000)
const secondsOrNull = (ms: number | string | null) => (ms === null ? null : seconds(ms))

export const file = (row: FileRow): Batch.FileObject => ({
  id: row.id,
  object: "file",
  bytes: Number(row.bytes),
  created_at: seconds(row.created_at),
  expires_at: null,
  filename: row.filename,
  purpose: row.purpose === "batch_output" ? "batch_output" : "batch",
  status: "processed",
  status_details: null
})

// Set when a batch is finished (`completed`, `cancelled` or `expired`), to "" when the file would hold no line.
const finished = (status: Batch.Status) => status === "completed" || status === "cancelled" || status === "expired"

export const batch = (row: BatchRow): Batch.BatchObject => ({
  id: row.id,
  object: "batch",
  endpoint: row.endpoint,
  errors: row.errors === null ? null : JSON.parse(row.errors),
  input_file_id: row.input_file_id,
  completion_window: row.completion_window,
  status: row.status,
  output_file_id: finished(row.status) && row.output_file_id !== "" ? row.output_file_id : null,
  error_file_id: finished(row.status) && row.error_file_id !== "" ? row.error_file_id : null,
  created_at: seconds(row.created_at),
  in_progress_at: secondsOrNull(row.in_progress_at),
  expires_at: secondsOrNull(row.expires_at),
  finalizing_at: secondsOrNull(row.finalizing_at),
  completed_at: secondsOrNull(row.completed_at),
  failed_at: secondsOrNull(row.failed_at),
  expired_at: secondsOrNull(row.expired_at),
  cancelling_at: secondsOrNull(row.cancelling_at),
  cancelled_at: secondsOrNull(row.cancelled_at),
  request_counts: { total: Number(row.total), completed: Number(row.completed), failed: Number(row.failed) },
  metadata: row.metadata === null ? null : JSON.parse(row.metadata),
  cost: creditsFromNanos(BigInt(row.cost_nanos))
})
