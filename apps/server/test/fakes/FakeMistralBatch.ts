import * as FakeBatchJobs from "./FakeBatchJobs.ts"
import * as FakeOpenAi from "./FakeOpenAi.ts"
import { multipart } from "./FakeOpenAiBatch.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * Mistral's batch jobs over a fake Mistral host (`/v1`, bearer key), in Mistral's wire format:
 * `POST /v1/files` (multipart, `purpose=batch`), `GET /v1/files/{id}/content`,
 * `DELETE /v1/files/{id}`, `POST /v1/batch/jobs` (`input_files`, `endpoint`, `model`,
 * `metadata`, `timeout_hours`), `GET /v1/batch/jobs` (`page`, `page_size`),
 * `GET /v1/batch/jobs/{id}`, `POST /v1/batch/jobs/{id}/cancel`. A job's status is Mistral's
 * (`QUEUED`, `RUNNING`, `SUCCESS`, `FAILED`, `TIMEOUT_EXCEEDED`, `CANCELLATION_REQUESTED`,
 * `CANCELLED`); each input line `{ custom_id, body }` runs through the fake's
 * `/v1/embeddings` with the job's model, and its result goes to the `output_file` (or, a
 * failure, the `error_file`) in OpenAI's result shape. `/v1/embeddings` answers live too (an
 * input `failRequest` refuses, refused there as well).
 */
export interface Options extends FakeOpenAi.Options, FakeBatchJobs.JobsOptions {
  /** Input lines the job fails: the status and message of their result. */
  readonly failRequest?: (customId: string, body: unknown) => { readonly status: number; readonly message: string } | undefined
}

interface Request {
  readonly custom_id: string
  readonly body: Record<string, unknown>
}

export interface FakeMistralBatch extends FakeUpstream.FakeServer {
  readonly jobs: FakeBatchJobs.Jobs<Request, string>
  readonly files: ReadonlyMap<string, FakeBatchJobs.StoredFile>
}

const error = (status: number, message: string) => ({ status, body: { object: "error", message, type: "invalid_request_error", param: null, code: null } })

const statuses: Record<FakeBatchJobs.JobState, string> = {
  queued: "QUEUED",
  running: "RUNNING",
  succeeded: "SUCCESS",
  failed: "FAILED",
  expired: "TIMEOUT_EXCEEDED",
  cancelling: "CANCELLATION_REQUESTED",
  cancelled: "CANCELLED"
}

export const start = async (options: Options = {}): Promise<FakeMistralBatch> => {
  const key = options.apiKey ?? "sk-fake"
  const live = FakeOpenAi.api(options)
  const jobs = FakeBatchJobs.jobs<Request, string>(options)
  // Mistral's file object: an upload is a `batch_request` of source `upload`; a job's results, `batch_result` or `batch_error`.
  const files = FakeBatchJobs.filesApi("/v1", jobs.nextId, error, multipart, (file) => ({
    id: file.id,
    object: "file",
    bytes: Buffer.byteLength(file.content),
    created_at: Math.floor(file.createdAt / 1000),
    filename: file.filename,
    purpose: "batch",
    sample_type: file.purpose === "batch" ? "batch_request" : file.purpose,
    num_lines: file.content.split("\n").filter((l) => l.trim() !== "").length,
    mimetype: "application/jsonl",
    source: file.purpose === "batch" ? "upload" : "mistral"
  }))

  const jobObject = (job: FakeBatchJobs.FakeJob<Request, string>) => {
    const failed = job.outputs.filter((o) => JSON.parse(o).response?.status_code !== 200).length
    return {
      id: job.id,
      object: "batch",
      input_files: [job.meta.input],
      metadata: job.meta.metadata ?? null,
      endpoint: "/v1/embeddings",
      model: job.meta.model,
      output_file: job.meta.output ?? null,
      error_file: job.meta.errors ?? null,
      errors: job.state === "failed" ? [{ message: "The job failed", count: 1 }] : [],
      status: statuses[job.state],
      created_at: Math.floor(job.createdAt / 1000),
      total_requests: job.requests.length,
      completed_requests: job.outputs.length,
      succeeded_requests: job.outputs.length - failed,
      failed_requests: failed
    }
  }

  // The job's results, written as its output and error files when it ends.
  const ended = (job: FakeBatchJobs.FakeJob<Request, string>) => {
    const ok = job.outputs.filter((o) => JSON.parse(o).response?.status_code === 200)
    const bad = job.outputs.filter((o) => JSON.parse(o).response?.status_code !== 200)
    const meta = job.meta as Record<string, unknown>
    if (ok.length > 0) meta.output = files.put(`${ok.join("\n")}\n`, "batch_result", `${job.id}.jsonl`).id
    if (bad.length > 0) meta.errors = files.put(`${bad.join("\n")}\n`, "batch_error", `${job.id}_error.jsonl`).id
  }

  const run = (model: string) => (request: Request) => {
    const id = jobs.nextId("batch-req-")
    const failure = options.failRequest?.(request.custom_id, request.body)
    const reply = failure !== undefined
      ? error(failure.status, failure.message)
      : live.handle({
        method: "POST",
        path: "/v1/embeddings",
        headers: { authorization: `Bearer ${key}` },
        raw: "",
        body: { model, ...request.body }
      }, {})
    return JSON.stringify({ id, custom_id: request.custom_id, response: { status_code: reply.status, body: reply.body }, error: null })
  }

  const handle = (request: FakeUpstream.RecordedRequest) => {
    const path = request.path.split("?")[0]!
    if (FakeUpstream.bearer(request) !== key) return { status: 401, body: { message: "Unauthorized", request_id: "fake" } }
    const fileAnswer = files.handle(request as FakeUpstream.RecordedRequest & { headers: Record<string, unknown> })
    if (fileAnswer !== undefined) return fileAnswer
    if (request.method === "POST" && path === "/v1/batch/jobs") {
      const body = request.body
      if (!FakeUpstream.isRecord(body) || !Array.isArray(body.input_files) || body.input_files.length !== 1) {
        return error(422, "input_files: exactly one file is expected here")
      }
      if (body.endpoint !== "/v1/embeddings" || typeof body.model !== "string") return error(422, "endpoint and model are required")
      const input = files.stored.get(body.input_files[0] as string)
      if (input === undefined) return error(404, `File ${String(body.input_files[0])} not found`)
      const requests = FakeBatchJobs.jsonLines(input.content) as Array<Request>
      if (requests.some((r) => typeof r.custom_id !== "string" || !FakeUpstream.isRecord(r.body) || "model" in r.body)) {
        return error(422, "each line needs a custom_id and a body without a model (the job names it)")
      }
      const job = jobs.create(String(FakeUpstream.isRecord(body.metadata) ? body.metadata.switchyard_job : ""), requests, {
        input: input.id,
        model: body.model,
        metadata: body.metadata ?? null
      })
      return { status: 200, body: jobObject(job) }
    }
    if (request.method === "GET" && path === "/v1/batch/jobs") {
      const data = [...jobs.all.values()].reverse().map(jobObject)
      return { status: 200, body: { object: "list", data, total: data.length } }
    }
    const one = /^\/v1\/batch\/jobs\/([^/]+)(\/cancel)?$/u.exec(path)
    const job = one === null ? undefined : jobs.all.get(one[1]!)
    if (one === null) return live.handle(request, {})
    if (job === undefined) return error(404, `Job ${one[1]} not found`)
    if (request.method === "POST" && one[2] !== undefined) {
      jobs.cancel(job)
      return { status: 200, body: jobObject(job) }
    }
    if (request.method === "GET" && one[2] === undefined) {
      jobs.advance(job, run(String(job.meta.model)), ended)
      return { status: 200, body: jobObject(job) }
    }
    return error(404, "Not Found")
  }

  // An input the provider refuses, it refuses live too.
  const embed = (request: FakeUpstream.RecordedRequest, shape: Parameters<FakeUpstream.FakeApi["handle"]>[1]) => {
    const failure = FakeUpstream.isRecord(request.body) ? options.failRequest?.("", { ...request.body, model: undefined }) : undefined
    return failure !== undefined ? error(failure.status, failure.message) : live.handle(request, shape)
  }
  const server = await FakeUpstream.start({ basePath: "/v1", errorBody: (status, message) => error(status, message).body, handle: (request, shape) => {
    const path = request.path.split("?")[0]!
    return path === "/v1/embeddings" ? embed(request, shape) : handle(request)
  } })
  return { ...server, jobs, files: files.stored }
}
