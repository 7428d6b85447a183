import * as FakeOpenAi from "./FakeOpenAi.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * OpenAI's Files and Batch API over the fake OpenAI host, in OpenAI's wire format: `POST /v1/files`
 * (multipart, `purpose=batch`), `GET /v1/files/{id}/content`, `DELETE /v1/files/{id}`, `POST /v1/batches`,
 * `GET /v1/batches` (`limit`), `GET /v1/batches/{id}`, `POST /v1/batches/{id}/cancel`. A batch is
 * `validating` when made, `in_progress` from its first retrieve, and runs `linesPerPoll` of its
 * requests per retrieve (all of them when absent) through the fake's embeddings endpoint; once all
 * ran it is `completed` with an output file (and an error file when some failed). A cancel makes it
 * `cancelling`, and `cancelled` at the next retrieve with the results of the requests that ran.
 * `/v1/embeddings` answers live as the fake OpenAI host does.
 */
export interface Options extends FakeOpenAi.Options {
  readonly linesPerPoll?: number
  /** Requests the provider batch fails: the status and message of their result. */
  readonly failRequest?: (customId: string, body: unknown) => { readonly status: number; readonly message: string } | undefined
}

export interface FakeBatch {
  id: string
  status: "validating" | "in_progress" | "finalizing" | "completed" | "failed" | "expired" | "cancelling" | "cancelled"
  readonly input_file_id: string
  readonly metadata: unknown
  readonly requests: ReadonlyArray<{ readonly custom_id: string; readonly body: unknown }>
  readonly results: Array<string>
  readonly errors: Array<string>
  output_file_id: string | null
  error_file_id: string | null
  readonly created_at: number
}

export interface FakeBatchServer extends FakeUpstream.FakeServer {
  readonly batches: ReadonlyMap<string, FakeBatch>
  /** The files stored now (uploads, outputs and errors), by id: none once every batch's were deleted. */
  readonly files: ReadonlyMap<string, { readonly id: string; readonly purpose: string }>
  /** While paused, a retrieve runs no request (the batch stays as it is). */
  readonly pause: (paused: boolean) => void
}

const error = (status: number, message: string) => ({
  status,
  body: { error: { message, type: "invalid_request_error", param: null, code: null } }
})

/** The parts of a multipart/form-data body: name, filename, content. */
export const multipart = (raw: string, contentType: string | undefined) => {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/u.exec(contentType ?? "")
  if (boundary === null) return undefined
  const marker = `--${boundary[1] ?? boundary[2]}`
  const parts = new Map<string, { readonly filename: string | undefined; readonly content: string }>()
  for (const piece of raw.split(marker).slice(1)) {
    if (piece.startsWith("--")) break
    const split = piece.indexOf("\r\n\r\n")
    if (split === -1) continue
    const head = piece.slice(0, split)
    const name = /name="([^"]*)"/u.exec(head)?.[1]
    if (name === undefined) continue
    parts.set(name, { filename: /filename="([^"]*)"/u.exec(head)?.[1], content: piece.slice(split + 4, piece.length - 2) })
  }
  return parts
}

/**
 * Where a Files and Batch API lives and what it checks: OpenAI's under `/v1` with its bearer key;
 * Azure OpenAI's under `/openai` with `api-version` and its `api-key` or Entra token (see
 * FakeAzureOpenAi). `run` answers one request of a batch as the live endpoint would.
 */
export interface Routes {
  readonly prefix: string
  /** The request line's `url` and the batch's `endpoint`. */
  readonly endpoint: string
  /** A refusal of the request's credential or query, or undefined when they pass. */
  readonly refuse: (request: FakeUpstream.RecordedRequest) => { readonly status: number; readonly body: unknown } | undefined
  readonly run: (body: unknown) => { readonly status: number; readonly body: unknown }
  readonly linesPerPoll?: number | undefined
  readonly failRequest?: Options["failRequest"]
}

export interface BatchRoutes {
  readonly batches: ReadonlyMap<string, FakeBatch>
  /** The files stored now (uploads, outputs and errors), by id. */
  readonly files: ReadonlyMap<string, { readonly id: string; readonly purpose: string }>
  readonly pause: (paused: boolean) => void
  /** Whether a path is the batch API's. */
  readonly owns: (path: string) => boolean
  readonly handle: (request: FakeUpstream.RecordedRequest) => { readonly status: number; readonly body: unknown; readonly text?: string }
}

export const start = async (options: Options = {}): Promise<FakeBatchServer> => {
  const live = FakeOpenAi.api(options)
  const routes = batchRoutes({
    prefix: "/v1",
    endpoint: "/v1/embeddings",
    refuse: (request) => FakeUpstream.bearer(request) !== (options.apiKey ?? "sk-fake") ? error(401, "Incorrect API key provided.") : undefined,
    run: (body) =>
      live.handle({
        method: "POST",
        path: "/v1/embeddings",
        headers: { authorization: `Bearer ${options.apiKey ?? "sk-fake"}` },
        raw: JSON.stringify(body),
        body
      }, {}),
    linesPerPoll: options.linesPerPoll,
    failRequest: options.failRequest
  })
  const api: FakeUpstream.FakeApi = {
    basePath: "/v1",
    errorBody: (status, message) => error(status, message).body,
    handle: (request, shape) => routes.owns(request.path.split("?")[0]!) ? routes.handle(request) : live.handle(request, shape)
  }
  const server = await FakeUpstream.start(api)
  return { ...server, batches: routes.batches, files: routes.files, pause: routes.pause }
}

/** A Files and Batch API's routes under `routes.prefix`, over an in-memory store. */
export const batchRoutes = (options: Routes): BatchRoutes => {
  const files = new Map<string, { readonly id: string; readonly filename: string; readonly purpose: string; readonly content: string }>()
  const batches = new Map<string, FakeBatch>()
  let paused = false
  let serial = 0
  const nextId = (prefix: string) => {
    serial += 1
    return `${prefix}-fake${serial.toString().padStart(6, "0")}`
  }
  const seconds = () => Math.floor(Date.now() / 1000)

  const fileObject = (file: { readonly id: string; readonly filename: string; readonly purpose: string; readonly content: string }) => ({
    id: file.id,
    object: "file",
    bytes: Buffer.byteLength(file.content),
    created_at: seconds(),
    filename: file.filename,
    purpose: file.purpose
  })

  const batchObject = (b: FakeBatch) => ({
    id: b.id,
    object: "batch",
    endpoint: options.endpoint,
    errors: null,
    input_file_id: b.input_file_id,
    completion_window: "24h",
    status: b.status,
    output_file_id: b.output_file_id,
    error_file_id: b.error_file_id,
    created_at: b.created_at,
    in_progress_at: null,
    expires_at: b.created_at + 86_400,
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    request_counts: { total: b.requests.length, completed: b.results.length, failed: b.errors.length },
    metadata: b.metadata
  })

  const writeFiles = (b: FakeBatch) => {
    const write = (lines: ReadonlyArray<string>, name: string) => {
      if (lines.length === 0) return null
      const file = { id: nextId("file"), filename: name, purpose: "batch_output", content: `${lines.join("\n")}\n` }
      files.set(file.id, file)
      return file.id
    }
    b.output_file_id = write(b.results, `${b.id}_output.jsonl`)
    b.error_file_id = write(b.errors, `${b.id}_error.jsonl`)
  }

  // Runs the batch's next requests through the live embeddings endpoint.
  const advance = (b: FakeBatch) => {
    if (b.status === "validating") {
      b.status = "in_progress"
      return
    }
    if (b.status === "cancelling") {
      b.status = "cancelled"
      writeFiles(b)
      return
    }
    if (b.status !== "in_progress" || paused) return
    const done = b.results.length + b.errors.length
    const next = b.requests.slice(done, done + (options.linesPerPoll ?? b.requests.length))
    for (const request of next) {
      const failure = options.failRequest?.(request.custom_id, request.body)
      const id = nextId("batch_req")
      if (failure !== undefined) {
        b.errors.push(JSON.stringify({
          id,
          custom_id: request.custom_id,
          response: { status_code: failure.status, request_id: id, body: error(failure.status, failure.message).body },
          error: null
        }))
        continue
      }
      const reply = options.run(request.body)
      const line = JSON.stringify({ id, custom_id: request.custom_id, response: { status_code: reply.status, request_id: id, body: reply.body }, error: null })
      if (reply.status === 200) b.results.push(line)
      else b.errors.push(line)
    }
    if (b.results.length + b.errors.length === b.requests.length) {
      b.status = "completed"
      writeFiles(b)
    }
  }

  const prefix = options.prefix
  const handle = (request: FakeUpstream.RecordedRequest): { readonly status: number; readonly body: unknown; readonly text?: string } => {
    const path = request.path.split("?")[0]!
    const refused = options.refuse(request)
    if (refused !== undefined) return refused
    if (request.method === "POST" && path === `${prefix}/files`) {
      const parts = multipart(request.raw, request.headers["content-type"])
      const file = parts?.get("file")
      if (parts === undefined || file === undefined) return error(400, "'file' is a required property")
      if (parts.get("purpose")?.content !== "batch") return error(400, "'purpose' must be 'batch'")
      const stored = { id: nextId("file"), filename: file.filename ?? "upload.jsonl", purpose: "batch", content: file.content }
      files.set(stored.id, stored)
      return { status: 200, body: fileObject(stored) }
    }
    const stored = new RegExp(`^${prefix}/files/([^/]+)$`, "u").exec(path)
    if (request.method === "DELETE" && stored !== null) {
      if (!files.delete(stored[1]!)) return error(404, `No such File object: ${stored[1]}`)
      return { status: 200, body: { id: stored[1], object: "file", deleted: true } }
    }
    const content = new RegExp(`^${prefix}/files/([^/]+)/content$`, "u").exec(path)
    if (request.method === "GET" && content !== null) {
      const file = files.get(content[1]!)
      return file === undefined ? error(404, `No such File object: ${content[1]}`) : { status: 200, body: null, text: file.content }
    }
    if (request.method === "POST" && path === `${prefix}/batches`) {
      const body = request.body
      if (!FakeUpstream.isRecord(body) || typeof body.input_file_id !== "string") return error(400, "'input_file_id' is required")
      if (body.endpoint !== options.endpoint || body.completion_window !== "24h") return error(400, "unsupported endpoint or window")
      const file = files.get(body.input_file_id)
      if (file === undefined) return error(404, `No such File object: ${body.input_file_id}`)
      const requests = file.content.split("\n").filter((l) => l.trim().length > 0).map((l) => JSON.parse(l) as { custom_id: string; body: unknown })
      const b: FakeBatch = {
        id: nextId("batch"),
        status: "validating",
        input_file_id: file.id,
        metadata: body.metadata ?? null,
        requests,
        results: [],
        errors: [],
        output_file_id: null,
        error_file_id: null,
        created_at: seconds()
      }
      batches.set(b.id, b)
      return { status: 200, body: batchObject(b) }
    }
    if (request.method === "GET" && path === `${prefix}/batches`) {
      return { status: 200, body: { object: "list", data: [...batches.values()].reverse().map(batchObject), has_more: false } }
    }
    const one = new RegExp(`^${prefix}/batches/([^/]+)(/cancel)?$`, "u").exec(path)
    const b = one === null ? undefined : batches.get(one[1]!)
    if (one === null) return error(404, `Unknown request URL: ${request.method} ${request.path}`)
    if (b === undefined) return error(404, `No such Batch object: ${one[1]}`)
    if (request.method === "POST" && one[2] !== undefined) {
      if (b.status === "validating" || b.status === "in_progress" || b.status === "finalizing") b.status = "cancelling"
      return { status: 200, body: batchObject(b) }
    }
    if (request.method === "GET" && one[2] === undefined) {
      advance(b)
      return { status: 200, body: batchObject(b) }
    }
    return error(404, `Unknown request URL: ${request.method} ${request.path}`)
  }
  return {
    batches,
    files,
    pause: (value) => {
      paused = value
    },
    owns: (path) => path.startsWith(`${prefix}/files`) || path.startsWith(`${prefix}/batches`),
    handle
  }
}
