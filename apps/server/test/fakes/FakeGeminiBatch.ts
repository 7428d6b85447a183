import * as FakeBatchJobs from "./FakeBatchJobs.ts"
import * as FakeGemini from "./FakeGemini.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * The Gemini API's batch embeddings over a fake Generative Language host, key in
 * `x-goog-api-key`, as its reference and Google's own SDK use them: the Files API's resumable
 * upload (`POST /upload/v1beta/files` with `X-Goog-Upload-Protocol: resumable` and
 * `X-Goog-Upload-Command: start` answers an `X-Goog-Upload-URL`; the bytes go there, the last
 * chunk with `upload, finalize` at the right `X-Goog-Upload-Offset`), `GET
 * /v1beta/files/{id}:download?alt=media`, `DELETE /v1beta/files/{id}`; `POST
 * /v1beta/models/{model}:asyncBatchEmbedContent` (`batch.input_config.file_name`), `GET
 * /v1beta/batches` and `/v1beta/batches/{id}` (operations whose `metadata.state` is
 * `BATCH_STATE_*`), `POST /v1beta/batches/{id}:cancel`. Each input line `{ key, request }` is an
 * `EmbedContentRequest` run through the fake's `batchEmbedContents`; its result line is
 * `{ key, response: { embedding, tokenCount } }` (or `{ key, error }`) in the job's responses file.
 */
export interface Options extends FakeGemini.Options, FakeBatchJobs.JobsOptions {}

interface Request {
  readonly key: string
  readonly request: Record<string, unknown>
}

export interface FakeGeminiBatch extends FakeUpstream.FakeServer {
  readonly jobs: FakeBatchJobs.Jobs<Request, string>
  readonly files: ReadonlyMap<string, FakeBatchJobs.StoredFile>
  /** Upload sessions begun and not finalized. */
  readonly openUploads: () => number
}

const statusNames: Record<number, string> = { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND" }
const error = (status: number, message: string) => ({ status, body: { error: { code: status, message, status: statusNames[status] ?? "UNKNOWN" } } })

const states: Record<FakeBatchJobs.JobState, string> = {
  queued: "BATCH_STATE_PENDING",
  running: "BATCH_STATE_RUNNING",
  succeeded: "BATCH_STATE_SUCCEEDED",
  failed: "BATCH_STATE_FAILED",
  expired: "BATCH_STATE_EXPIRED",
  cancelling: "BATCH_STATE_RUNNING",
  cancelled: "BATCH_STATE_CANCELLED"
}

export const start = async (options: Options = {}): Promise<FakeGeminiBatch> => {
  const key = options.apiKey ?? "AIza-fake"
  const live = FakeGemini.api({ ...options, reportUsage: true })
  const jobs = FakeBatchJobs.jobs<Request, string>(options)
  const files = new Map<string, FakeBatchJobs.StoredFile>()
  const uploads = new Map<string, { readonly name: string; readonly size: number; content: string }>()

  const operation = (job: FakeBatchJobs.FakeJob<Request, string>) => {
    const ended = job.state === "succeeded" || job.state === "failed" || job.state === "expired" || job.state === "cancelled"
    const output = job.meta.output === undefined ? undefined : { responsesFile: job.meta.output }
    return {
      name: `batches/${job.id}`,
      metadata: {
        "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.EmbedContentBatch",
        model: job.meta.model,
        displayName: job.name,
        inputConfig: { fileName: job.meta.input },
        ...(output !== undefined ? { output } : {}),
        batchStats: { requestCount: String(job.requests.length), successfulRequestCount: String(job.outputs.length) },
        state: states[job.state],
        name: `batches/${job.id}`
      },
      done: ended,
      ...(ended && output !== undefined ? { response: { "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.EmbedContentBatchOutput", ...output } } : {}),
      ...(job.state === "failed" ? { error: { code: 13, message: "The batch failed" } } : {})
    }
  }

  const run = (model: string) => (request: Request) => {
    const reply = live.handle({
      method: "POST",
      path: `/v1beta/${model}:batchEmbedContents`,
      headers: { "x-goog-api-key": key },
      raw: "",
      body: { requests: [request.request] }
    }, {}) as { status: number; body: { embeddings?: Array<{ values: Array<number> }>; usageMetadata?: { promptTokenCount: number }; error?: { message: string } } }
    if (reply.status !== 200) return JSON.stringify({ key: request.key, error: { code: 3, message: reply.body.error?.message ?? "invalid", status: "INVALID_ARGUMENT" } })
    return JSON.stringify({
      key: request.key,
      response: { embedding: reply.body.embeddings![0], tokenCount: String(reply.body.usageMetadata?.promptTokenCount ?? 0) }
    })
  }

  const ended = (job: FakeBatchJobs.FakeJob<Request, string>) => {
    if (job.outputs.length === 0) return
    const file = { id: jobs.nextId("batch-output-"), filename: `${job.id}.jsonl`, purpose: "batch_output", content: `${job.outputs.join("\n")}\n`, createdAt: Date.now() }
    files.set(file.id, file)
    ;(job.meta as Record<string, unknown>).output = `files/${file.id}`
  }

  const upload = (request: FakeUpstream.RecordedRequest, url: URL) => {
    const command = String(request.headers["x-goog-upload-command"] ?? "")
    if (command === "start") {
      if (request.headers["x-goog-upload-protocol"] !== "resumable") return error(400, "Only the resumable protocol is served here")
      const size = Number(request.headers["x-goog-upload-header-content-length"])
      const body = request.body
      if (!Number.isInteger(size) || !FakeUpstream.isRecord(body) || !FakeUpstream.isRecord(body.file)) return error(400, "Invalid upload start")
      const id = jobs.nextId("upload-")
      uploads.set(id, { name: String(field(body.file, "display_name") ?? ""), size, content: "" })
      return {
        status: 200,
        body: null,
        text: "",
        headers: { "x-goog-upload-status": "active", "x-goog-upload-url": `http://${request.headers.host}/upload/v1beta/files?upload_id=${id}&upload_protocol=resumable` }
      }
    }
    const session = uploads.get(url.searchParams.get("upload_id") ?? "")
    if (session === undefined) return error(404, "No such upload session")
    if (Number(request.headers["x-goog-upload-offset"]) !== Buffer.byteLength(session.content)) return error(400, "Wrong X-Goog-Upload-Offset")
    session.content += request.raw
    if (!command.includes("finalize")) return { status: 200, body: null, text: "", headers: { "x-goog-upload-status": "active" } }
    if (Buffer.byteLength(session.content) !== session.size) return error(400, "The upload's size is not the size announced")
    uploads.delete(url.searchParams.get("upload_id")!)
    const file = { id: jobs.nextId("input-"), filename: session.name, purpose: "batch", content: session.content, createdAt: Date.now() }
    files.set(file.id, file)
    return {
      status: 200,
      body: { file: { name: `files/${file.id}`, displayName: session.name, mimeType: "application/jsonl", sizeBytes: String(session.size), state: "ACTIVE" } },
      headers: { "x-goog-upload-status": "final" }
    }
  }

  // Google's JSON takes each field by its proto name or its lowerCamel one.
  const field = (record: Record<string, unknown> | undefined, snake: string) =>
    record?.[snake] ?? record?.[snake.replace(/_([a-z])/gu, (_, c: string) => c.toUpperCase())]

  const create = (request: FakeUpstream.RecordedRequest, model: string) => {
    const body = request.body
    const batch = FakeUpstream.isRecord(body) && FakeUpstream.isRecord(body.batch) ? body.batch : undefined
    const inputConfig = field(batch, "input_config")
    const config = FakeUpstream.isRecord(inputConfig) ? inputConfig : undefined
    const fileName = field(config, "file_name")
    const name = typeof fileName === "string" ? fileName : undefined
    const input = name === undefined ? undefined : files.get(name.replace(/^files\//u, ""))
    if (input === undefined) return error(400, "batch.input_config.file_name must name an uploaded file")
    const requests = FakeBatchJobs.jsonLines(input.content) as Array<Request>
    if (requests.some((r) => typeof r.key !== "string" || !FakeUpstream.isRecord(r.request) || r.request.model !== `models/${model}`)) {
      return error(400, "each line is { key, request } whose request names the batch's model")
    }
    const job = jobs.create(String(field(batch, "display_name") ?? ""), requests, { model: `models/${model}`, input: name })
    return { status: 200, body: operation(job) }
  }

  const handle = (request: FakeUpstream.RecordedRequest) => {
    const url = new URL(request.path, "http://fake")
    if (request.headers["x-goog-api-key"] !== key) {
      return {
        status: 400,
        body: {
          error: {
            code: 400,
            message: "API key not valid. Please pass a valid API key.",
            status: "INVALID_ARGUMENT",
            details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com" }]
          }
        }
      }
    }
    if (request.method === "POST" && url.pathname === "/upload/v1beta/files") return upload(request, url)
    const created = /^\/v1beta\/models\/([^/:]+):asyncBatchEmbedContent$/u.exec(url.pathname)
    if (request.method === "POST" && created !== null) return create(request, decodeURIComponent(created[1]!))
    if (request.method === "POST" && /^\/v1beta\/models\/[^/:]+:batchEmbedContents$/u.test(url.pathname)) return live.handle(request, {})
    if (request.method === "GET" && url.pathname === "/v1beta/batches") {
      return { status: 200, body: { operations: [...jobs.all.values()].reverse().map(operation) } }
    }
    const file = /^\/v1beta\/files\/([^/:]+)(:download)?$/u.exec(url.pathname)
    if (file !== null) {
      const stored = files.get(file[1]!)
      if (stored === undefined) return error(404, `File files/${file[1]} not found`)
      if (request.method === "GET" && file[2] !== undefined && url.searchParams.get("alt") === "media") return { status: 200, body: null, text: stored.content }
      if (request.method === "DELETE" && file[2] === undefined) {
        files.delete(stored.id)
        return { status: 200, body: {} }
      }
      return error(404, "Not Found")
    }
    const one = /^\/v1beta\/batches\/([^/:]+)(:cancel)?$/u.exec(url.pathname)
    const job = one === null ? undefined : jobs.all.get(one[1]!)
    if (job === undefined) return error(404, "Requested entity was not found.")
    if (request.method === "POST" && one![2] !== undefined) {
      jobs.cancel(job)
      return { status: 200, body: {} }
    }
    if (request.method === "GET" && one![2] === undefined) {
      jobs.advance(job, run(String(job.meta.model)), ended)
      return { status: 200, body: operation(job) }
    }
    return error(404, "Not Found")
  }

  const server = await FakeUpstream.start({ basePath: "/v1beta", errorBody: (status, message) => error(status, message).body, handle })
  return { ...server, jobs, files, openUploads: () => uploads.size }
}
