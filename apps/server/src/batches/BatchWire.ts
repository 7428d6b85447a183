import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import type * as Batch from "@switchyard/core/schema/Batch"
import { Config, Duration } from "effect"
import type { BatchRow, FileRow } from "../store/batches/BatchStore.ts"
import type { JobRow } from "../store/batches/ProviderBatchStore.ts"

/** How long files (uploads, outputs and errors) are kept after they were made, then deleted. */
export const Retention = Config.Duration("SWITCHYARD_BATCH_RETENTION").pipe(Config.withDefault(Duration.days(30)))

/**
 * Rows as OpenAI's objects: times in unix seconds, an absent file id as `null`.
 */

const seconds = (ms: number | string) => Math.floor(Number(ms) / 1000)
const secondsOrNull = (ms: number | string | null) => (ms === null ? null : seconds(ms))

/** A file as OpenAI's object; it expires (is deleted) `retentionMs` after it was made. */
export const file = (row: FileRow, retentionMs: number): Batch.FileObject => ({
  id: row.id,
  object: "file",
  bytes: Number(row.bytes),
  created_at: seconds(row.created_at),
  expires_at: seconds(Number(row.created_at) + retentionMs),
  filename: row.filename,
  purpose: row.purpose === "batch_output" ? "batch_output" : "batch",
  status: "processed",
  status_details: null
})

// Set when a batch is finished (`completed`, `cancelled` or `expired`), to "" when the file would hold no line.
const finished = (status: Batch.Status) => status === "completed" || status === "cancelled" || status === "expired"

/** A batch's provider job as the batch object lists it: its status in the gateway's words. */
const providerJob = (job: JobRow): Batch.ProviderJob => ({
  provider: job.provider,
  job_id: job.upstream_batch_id,
  status: job.status === "submitting"
    ? "submitting"
    : job.status === "cancelling"
    ? "cancelling"
    : job.status === "running"
    ? "in_progress"
    : jobStatuses[job.upstream_status ?? ""] ?? "completed",
  lines: (JSON.parse(job.lines) as ReadonlyArray<number>).length
})

const jobStatuses: Record<string, Batch.ProviderJobStatus> = {
  completed: "completed",
  failed: "failed",
  expired: "expired",
  cancelled: "cancelled",
  live: "live"
}

export const batch = (row: BatchRow, jobs: ReadonlyArray<JobRow> = []): Batch.BatchObject => ({
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
  cost: creditsFromNanos(BigInt(row.cost_nanos)),
  workspace_id: row.workspace_id,
  provider_jobs: jobs.map(providerJob)
})
