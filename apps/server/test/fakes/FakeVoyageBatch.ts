import * as FakeBatchJobs from "./FakeBatchJobs.ts"
import { multipart } from "./FakeOpenAiBatch.ts"
import * as FakeUpstream from "./FakeUpstream.ts"
import * as FakeVoyage from "./FakeVoyage.ts"

/**
 * Voyage AI's Batch API over a fake Voyage host (`/v1`, bearer key): its Files API
 * (`POST /v1/files` multipart with `purpose=batch`, `GET /v1/files/{id}/content`,
 * `DELETE /v1/files/{id}`) and `POST /v1/batches` (`input_file_id`, `endpoint` `/v1/embeddings`,
 * `completion_window` `12h`, `request_params` with the model and the parameters every line
 * shares), `GET /v1/batches` (`limit`), `GET /v1/batches/{id}`, `POST /v1/batches/{id}/cancel`,
 * statuses as OpenAI's. Each input line `{ custom_id, body: { input } }` runs through the fake's
 * `/v1/embeddings` with the batch's `request_params`; its result goes to the output file in
 * OpenAI's result shape. `/v1/embeddings` answers live too.
 */
export interface Options extends FakeVoyage.Options, FakeBatchJobs.JobsOptions {}

interface Request {
  readonly custom_id: string
  readonly body: Record<string, unknown>
}

export interface FakeVoyageBatch extends FakeUpstream.FakeServer {
  readonly jobs: FakeBatchJobs.Jobs<Request, string>
  readonly files: ReadonlyMap<string, FakeBatchJobs.StoredFile>
}

const error = (status: number, message: string) => ({ status, body: { detail: message } })

const statuses: Record<FakeBatchJobs.JobState, string> = {
  queued: "validating",
  running: "in_progress",
  succeeded: "completed",
  failed: "failed",
  expired: "expired",
  cancelling: "cancelling",
  cancelled: "cancelled"
}

export const start = async (options: Options = {}): Promise<FakeVoyageBatch> => {
  const key = options.apiKey ?? "pa-fake"
  const live = FakeVoyage.api(options)
  const jobs = FakeBatchJobs.jobs<Request, string>(options)
  // Voyage's file object: OpenAI's, its times as ISO strings.
  const files = FakeBatchJobs.filesApi("/v1", jobs.nextId, error, multipart, (file) => ({
    id: file.id,
    object: "file",
    bytes: Buffer.byteLength(file.content),
    created_at: new Date(file.createdAt).toISOString(),
    filename: file.filename,
    purpose: file.purpose,
    status: null,
    expires_at: new Date(file.createdAt + 30 * 86_400_000).toISOString(),
    status_details: null
  }))

  const batchObject = (job: FakeBatchJobs.FakeJob<Request, string>) => ({
    id: job.id,
    object: "batch",
    endpoint: "/v1/embeddings",
    errors: null,
    input_file_id: job.meta.input,
    completion_window: "12h",
    status: statuses[job.state],
    output_file_id: job.meta.output ?? null,
    error_file_id: job.meta.errors ?? null,
    created_at: new Date(job.createdAt).toISOString(),
    request_params: job.meta.params,
    request_counts: { total: job.requests.length, completed: job.outputs.length, failed: 0 },
    metadata: job.meta.metadata ?? null
  })

  const ended = (job: FakeBatchJobs.FakeJob<Request, string>) => {
    const ok = job.outputs.filter((o) => JSON.parse(o).response?.status_code === 200)
    const bad = job.outputs.filter((o) => JSON.parse(o).response?.status_code !== 200)
    const meta = job.meta as Record<string, unknown>
    if (ok.length > 0) meta.output = files.put(`${ok.join("\n")}\n`, "batch_output", `${job.id}_output.jsonl`).id
    if (bad.length > 0) meta.errors = files.put(`${bad.join("\n")}\n`, "batch_output", `${job.id}_error.jsonl`).id
  }

  const run = (params: Record<string, unknown>) => (request: Request) => {
    const reply = live.handle({
      method: "POST",
      path: "/v1/embeddings",
      headers: { authorization: `Bearer ${key}` },
      raw: "",
      body: { ...params, ...request.body }
    }, {})
    return JSON.stringify({ custom_id: request.custom_id, response: { status_code: reply.status, body: reply.body }, error: null })
  }

  const handle = (request: FakeUpstream.RecordedRequest) => {
    const path = request.path.split("?")[0]!
    if (FakeUpstream.bearer(request) !== key) return error(401, "Provided API key is invalid.")
    const fileAnswer = files.handle(request as FakeUpstream.RecordedRequest & { headers: Record<string, unknown> })
    if (fileAnswer !== undefined) return fileAnswer
    if (request.method === "POST" && path === "/v1/batches") {
      const body = request.body
      if (!FakeUpstream.isRecord(body) || typeof body.input_file_id !== "string") return error(400, "input_file_id is required")
      if (body.endpoint !== "/v1/embeddings" || body.completion_window !== "12h") return error(400, "endpoint must be /v1/embeddings and completion_window 12h")
      const params = body.request_params
      if (!FakeUpstream.isRecord(params) || typeof params.model !== "string") return error(400, "request_params.model is required")
      const input = files.stored.get(body.input_file_id)
      if (input === undefined) return error(404, `File ${body.input_file_id} not found`)
      const requests = FakeBatchJobs.jsonLines(input.content) as Array<Request>
      if (requests.some((r) => typeof r.custom_id !== "string" || !FakeUpstream.isRecord(r.body) || Object.keys(r.body).some((k) => k !== "input"))) {
        return error(400, "each line is { custom_id, body: { input } }: the model and parameters are the batch's request_params")
      }
      const job = jobs.create(String(FakeUpstream.isRecord(body.metadata) ? body.metadata.switchyard_job : ""), requests, {
        input: input.id,
        params,
        metadata: body.metadata ?? null
      })
      return { status: 200, body: batchObject(job) }
    }
    if (request.method === "GET" && path === "/v1/batches") {
      return { status: 200, body: { object: "list", data: [...jobs.all.values()].reverse().map(batchObject), has_more: false } }
    }
    const one = /^\/v1\/batches\/([^/]+)(\/cancel)?$/u.exec(path)
    const job = one === null ? undefined : jobs.all.get(one[1]!)
    if (one === null) return live.handle(request, {})
    if (job === undefined) return error(404, `Batch ${one[1]} not found`)
    if (request.method === "POST" && one[2] !== undefined) {
      jobs.cancel(job)
      return { status: 200, body: batchObject(job) }
    }
    if (request.method === "GET" && one[2] === undefined) {
      jobs.advance(job, run(job.meta.params as Record<string, unknown>), ended)
      return { status: 200, body: batchObject(job) }
    }
    return error(404, "Not Found")
  }

  const server = await FakeUpstream.start({
    basePath: "/v1",
    errorBody: (status, message) => error(status, message).body,
    handle: (request, shape) => (request.path.split("?")[0] === "/v1/embeddings" ? live.handle(request, shape) : handle(request))
  })
  return { ...server, jobs, files: files.stored }
}
