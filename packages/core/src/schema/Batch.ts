/**
 * OpenAI's Files and Batch API on the wire: the file and batch objects, their lists, the body of
 * `POST /batches`, and the limits of a batch's input file.
 *
 * **Details**
 *
 * The shapes are OpenAI's, so the `openai` SDK's `files` and `batches` resources read them
 * unchanged: timestamps are unix seconds, `request_counts` is `{ total, completed, failed }`,
 * lists are `{ object: "list", data, first_id, last_id, has_more }`. Switchyard adds `cost` to a
 * batch: USD charged for its served lines so far (the sum of their generations' costs).
 *
 * @since 0.4.0
 */
import { Schema } from "effect"

/**
 * The most bytes and lines an input file may hold (OpenAI's limits).
 *
 * @since 0.4.0
 */
export const limits = { bytes: 200 * 1024 * 1024, lines: 50_000 } as const

/**
 * The endpoints a batch runs its lines on.
 *
 * @since 0.4.0
 */
export const Endpoint = Schema.Literals(["/v1/embeddings", "/v1/rerank"])

/**
 * @since 0.4.0
 */
export type Endpoint = typeof Endpoint.Type

/**
 * The purposes a file has: `batch` (uploaded input) and `batch_output` (a batch's output or
 * error file).
 *
 * @since 0.4.0
 */
const Purpose = Schema.Literals(["batch", "batch_output"])

/**
 * A file as `GET /files/{file_id}` answers it.
 *
 * @since 0.4.0
 */
export const FileObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("file"),
  bytes: Schema.Int,
  created_at: Schema.Int,
  expires_at: Schema.NullOr(Schema.Int),
  filename: Schema.String,
  purpose: Purpose,
  status: Schema.Literal("processed"),
  status_details: Schema.Null
})

/**
 * @since 0.4.0
 */
export type FileObject = typeof FileObject.Type

/**
 * `GET /files`.
 *
 * @since 0.4.0
 */
export const FileList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(FileObject),
  first_id: Schema.NullOr(Schema.String),
  last_id: Schema.NullOr(Schema.String),
  has_more: Schema.Boolean
})

/**
 * `DELETE /files/{file_id}`.
 *
 * @since 0.4.0
 */
export const FileDeleted = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("file"),
  deleted: Schema.Boolean
})

const Limit = Schema.NumberFromString.pipe(
  Schema.decodeTo(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10_000 })))
)

/**
 * `GET /files` and `GET /batches`: `after` is the id the previous page ended with; newest first.
 *
 * @since 0.4.0
 */
export const ListQuery = {
  after: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(128))),
  limit: Schema.optionalKey(Limit),
  purpose: Schema.optionalKey(Schema.String),
  order: Schema.optionalKey(Schema.Literals(["asc", "desc"]))
}

/**
 * `GET /batches`: `ListQuery`, and with a management key `workspace_id`, the batches of that
 * workspace (an instance administrator's key: any workspace; without it, every workspace's).
 *
 * @since 0.5.0
 */
export const BatchListQuery = {
  ...ListQuery,
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(64)))
}

/**
 * The statuses of a batch, as OpenAI names them.
 *
 * @since 0.4.0
 */
export const Status = Schema.Literals([
  "validating",
  "failed",
  "in_progress",
  "finalizing",
  "completed",
  "expired",
  "cancelling",
  "cancelled"
])

/**
 * @since 0.4.0
 */
export type Status = typeof Status.Type

/**
 * Why a batch failed validation: one entry per problem, with the input line when there is one.
 *
 * @since 0.4.0
 */
export const BatchError = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  param: Schema.NullOr(Schema.String),
  line: Schema.NullOr(Schema.Int)
})

/**
 * @since 0.4.0
 */
export type BatchError = typeof BatchError.Type

const Seconds = Schema.NullOr(Schema.Int)

/**
 * Where a provider job of a batch stands: being submitted, running at the provider, being
 * cancelled, ended as the provider ended it, or `live` (the provider refused the job, and its
 * lines ran as live calls).
 *
 * @since 0.10.0
 */
export const ProviderJobStatus = Schema.Literals([
  "submitting",
  "in_progress",
  "cancelling",
  "completed",
  "failed",
  "expired",
  "cancelled",
  "live"
])

/**
 * @since 0.10.0
 */
export type ProviderJobStatus = typeof ProviderJobStatus.Type

/**
 * One job a batch's lines went to at a provider's own batch API: the provider's slug, the job's
 * id there (`null` until it is made), where it stands, and how many of the batch's lines it holds.
 *
 * @since 0.10.0
 */
export const ProviderJob = Schema.Struct({
  provider: Schema.String,
  job_id: Schema.NullOr(Schema.String),
  status: ProviderJobStatus,
  lines: Schema.Int
})

/**
 * @since 0.10.0
 */
export type ProviderJob = typeof ProviderJob.Type

/**
 * A batch as `GET /batches/{batch_id}` answers it.
 *
 * @since 0.4.0
 */
export const BatchObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("batch"),
  endpoint: Endpoint,
  errors: Schema.NullOr(Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(BatchError) })),
  input_file_id: Schema.String,
  completion_window: Schema.String,
  status: Status,
  output_file_id: Schema.NullOr(Schema.String),
  error_file_id: Schema.NullOr(Schema.String),
  created_at: Schema.Int,
  in_progress_at: Seconds,
  expires_at: Seconds,
  finalizing_at: Seconds,
  completed_at: Seconds,
  failed_at: Seconds,
  expired_at: Seconds,
  cancelling_at: Seconds,
  cancelled_at: Seconds,
  request_counts: Schema.Struct({ total: Schema.Int, completed: Schema.Int, failed: Schema.Int }),
  metadata: Schema.NullOr(Schema.Record(Schema.String, Schema.String)),
  /** Switchyard: USD charged for the lines served so far, as `usage.cost` of a live answer. */
  cost: Schema.Finite,
  /** Switchyard: the workspace the batch belongs to (an administrator oversees several). */
  workspace_id: Schema.optionalKey(Schema.String),
  /** Switchyard: the jobs its lines went to at providers' own batch APIs, oldest first. */
  provider_jobs: Schema.Array(ProviderJob)
})

/**
 * @since 0.4.0
 */
export type BatchObject = typeof BatchObject.Type

/**
 * `GET /batches`.
 *
 * @since 0.4.0
 */
export const BatchList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(BatchObject),
  first_id: Schema.NullOr(Schema.String),
  last_id: Schema.NullOr(Schema.String),
  has_more: Schema.Boolean
})

/**
 * `POST /batches`. OpenAI allows 16 metadata pairs, keys up to 64 characters and values up to 512.
 *
 * @since 0.4.0
 */
export const CreateBatch = Schema.Struct({
  input_file_id: Schema.String.check(Schema.isBetweenLength(1, 128)),
  endpoint: Endpoint,
  completion_window: Schema.Literal("24h"),
  metadata: Schema.optionalKey(Schema.NullOr(
    Schema.Record(Schema.String.check(Schema.isMaxLength(64)), Schema.String.check(Schema.isMaxLength(512))).check(
      Schema.isMaxProperties(16)
    )
  ))
})

/**
 * @since 0.4.0
 */
export type CreateBatch = typeof CreateBatch.Type

/**
 * The header of `POST /batches` that chooses how its lines run: `live` (every line a live call) or
 * `auto` (the default: a line whose endpoint has a batch price and a provider batch API goes
 * through that provider's batch API, at the batch price).
 *
 * @since 0.6.0
 */
export const executionHeader = "x-switchyard-batch-execution"

/**
 * How a batch's lines run (see {@link executionHeader}).
 *
 * @since 0.6.0
 */
const Execution = Schema.Literals(["auto", "live"])

/**
 * The headers `POST /batches` reads.
 *
 * @since 0.6.0
 */
export const CreateBatchHeaders = Schema.Struct({
  [executionHeader]: Schema.optionalKey(Execution)
})

