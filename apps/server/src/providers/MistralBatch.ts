import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import { Effect, Schema } from "effect"
import * as BatchHttp from "./BatchHttp.ts"
import { bearerPlacement, filesApi, readOpenAi } from "./OpenAiBatch.ts"
import * as OpenAiCompatible from "./OpenAiCompatible.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"

/**
 * Mistral's batch jobs as a provider batch wire format, under the provider's base URL
 * (`https://api.mistral.ai/v1`) with its bearer key: `POST /files` (multipart, `purpose=batch`)
 * uploads the requests' JSONL, `POST /batch/jobs` makes the job on it (`input_files`, `endpoint`
 * `/v1/embeddings`, the job's `model`), `GET /batch/jobs/{id}` polls it,
 * `POST /batch/jobs/{id}/cancel` cancels it, `GET /files/{id}/content` reads its `output_file`
 * and `error_file`, `DELETE /files/{id}` deletes them and the input. A request line is
 * `{ custom_id, body }`, its body the live call's in Mistral's dialect without the model (the
 * job names it); a result line is OpenAI's shape.
 */

const Job = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  input_files: Schema.Array(Schema.String),
  output_file: Schema.optionalKey(Schema.NullOr(Schema.String)),
  error_file: Schema.optionalKey(Schema.NullOr(Schema.String)),
  errors: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Struct({ message: Schema.String }))))
})

const decodeJob = UpstreamHttp.decode(Job)
const decodeList = UpstreamHttp.decode(Schema.Struct({ data: Schema.optionalKey(Schema.Array(Job)) }))

const states: Record<string, BatchProvider.State> = {
  QUEUED: "pending",
  RUNNING: "pending",
  SUCCESS: "completed",
  FAILED: "failed",
  TIMEOUT_EXCEEDED: "expired",
  CANCELLATION_REQUESTED: "cancelling",
  CANCELLED: "cancelled"
}

const upstreamJob = (job: typeof Job.Type): BatchProvider.UpstreamBatch => ({
  id: job.id,
  state: states[job.status] ?? "pending",
  results: [job.output_file, job.error_file].filter((id): id is string => typeof id === "string" && id !== ""),
  errors: (job.errors ?? []).map((e) => ({ code: "failed", message: e.message }))
})

// approx: Mistral publishes no per-job cap on embeddings batches; OpenAI's are kept.
const limits: BatchProvider.Limits = { maxRequests: 50_000, maxInputs: 50_000, maxBytes: 200_000_000, minRequests: 1 }

export const make = Effect.gen(function*() {
  const files = filesApi(yield* BatchHttp.make, bearerPlacement)
  const retrieve = (connection: Parameters<BatchProvider.BatchProvider["retrieve"]>[0], id: string) =>
    files.get(connection, `/batch/jobs/${encodeURIComponent(id)}`).pipe(Effect.flatMap(decodeJob), Effect.map(upstreamJob))

  const provider: BatchProvider.BatchProvider = {
    limits,
    requests: (key, request) =>
      Effect.map(OpenAiCompatible.requestBody(OpenAiCompatible.dialects.mistral, request), ({ model: _, ...body }) => ({
        lines: [JSON.stringify({ custom_id: key, body })],
        job: { model: request.upstreamModel, params: {} }
      })),
    upload: files.upload,
    create: (connection, input, job) =>
      files.post(connection, "/batch/jobs", {
        input_files: [input],
        endpoint: "/v1/embeddings",
        model: job.model,
        metadata: { switchyard_job: job.name },
        timeout_hours: 24
      }).pipe(Effect.flatMap(decodeJob), Effect.map(upstreamJob)),
    find: (connection, input) =>
      files.get(connection, "/batch/jobs", "page=0&page_size=100&order_by=-created").pipe(
        Effect.flatMap(decodeList),
        Effect.map((list) => {
          const found = (list.data ?? []).find((job) => job.input_files.includes(input))
          return found === undefined ? undefined : upstreamJob(found)
        })
      ),
    retrieve,
    cancel: (connection, id) => Effect.asVoid(files.post(connection, `/batch/jobs/${encodeURIComponent(id)}/cancel`, {})),
    results: files.results,
    answer: (key, request, lookup) => BatchHttp.single(key, lookup, (body) => readOpenAi(request, body)),
    cleanup: (connection, input, id) => files.cleanup(connection, input, id === undefined ? undefined : retrieve(connection, id))
  }
  return provider
})
