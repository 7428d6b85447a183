/**
 * What the fakes of the providers' batch APIs share (FakeMistralBatch, FakeVoyageBatch,
 * FakeGeminiBatch, FakeBedrockBatch, FakeVertexBatch): jobs that run their requests a few at each
 * poll through the fake's own model, as a provider's batch queue does, each in the provider's
 * words. A job is queued when made, running from its first poll, and ends once every request
 * ran; a test may pause every job, or make the next ones fail (before any request runs) or expire
 * (halfway, its results so far kept), as a provider's own would.
 */

export type JobState = "queued" | "running" | "succeeded" | "failed" | "expired" | "cancelling" | "cancelled"

export interface FakeJob<R, O> {
  readonly id: string
  readonly name: string
  state: JobState
  readonly requests: ReadonlyArray<R>
  readonly outputs: Array<O>
  /** What the provider keeps of the job besides (its input, model, parameters, output place). */
  readonly meta: Readonly<Record<string, unknown>>
  readonly createdAt: number
}

export interface JobsOptions {
  /** Requests run at each poll (all of them when absent). */
  readonly linesPerPoll?: number | undefined
}

export interface Jobs<R, O> {
  readonly all: ReadonlyMap<string, FakeJob<R, O>>
  readonly create: (name: string, requests: ReadonlyArray<R>, meta: Readonly<Record<string, unknown>>) => FakeJob<R, O>
  /** One poll: the job moves on (unless paused); `ended` is called once when it ends. */
  readonly advance: (job: FakeJob<R, O>, run: (request: R) => O, ended?: (job: FakeJob<R, O>) => void) => void
  readonly cancel: (job: FakeJob<R, O>) => void
  readonly pause: (paused: boolean) => void
  /** The next jobs made end so, one each: `failed` before any request ran, `expired` halfway. */
  readonly endNext: (...ends: ReadonlyArray<"failed" | "expired">) => void
  readonly nextId: (prefix: string) => string
}

export const jobs = <R, O>(options: JobsOptions = {}): Jobs<R, O> => {
  const all = new Map<string, FakeJob<R, O>>()
  const forced = new Map<string, "failed" | "expired">()
  let ends: Array<"failed" | "expired"> = []
  let paused = false
  let serial = 0
  const nextId = (prefix: string) => {
    serial += 1
    return `${prefix}${serial.toString().padStart(6, "0")}`
  }
  return {
    all,
    nextId,
    create: (name, requests, meta) => {
      const job: FakeJob<R, O> = { id: nextId("job"), name, state: "queued", requests, outputs: [], meta, createdAt: Date.now() }
      all.set(job.id, job)
      const end = ends.shift()
      if (end !== undefined) forced.set(job.id, end)
      return job
    },
    advance: (job, run, ended) => {
      if (job.state === "queued") {
        job.state = "running"
        return
      }
      if (job.state === "cancelling") {
        job.state = "cancelled"
        ended?.(job)
        return
      }
      if (job.state !== "running" || paused) return
      const end = forced.get(job.id)
      if (end === "failed") {
        job.state = "failed"
        ended?.(job)
        return
      }
      const stop = end === "expired" ? Math.floor(job.requests.length / 2) : job.requests.length
      const next = job.requests.slice(job.outputs.length, Math.min(stop, job.outputs.length + (options.linesPerPoll ?? job.requests.length)))
      for (const request of next) job.outputs.push(run(request))
      if (job.outputs.length >= stop) {
        job.state = end === "expired" ? "expired" : "succeeded"
        ended?.(job)
      }
    },
    cancel: (job) => {
      if (job.state === "queued" || job.state === "running") job.state = "cancelling"
    },
    pause: (value) => {
      paused = value
    },
    endNext: (...next) => {
      ends = [...next]
    }
  }
}

/** The lines of a JSONL text, parsed. */
export const jsonLines = (text: string): Array<unknown> =>
  text.split("\n").filter((l) => l.trim().length > 0).map((l) => JSON.parse(l) as unknown)

export interface StoredFile {
  readonly id: string
  readonly filename: string
  /** `batch` for an upload; the provider's own word for a file it wrote. */
  readonly purpose: string
  readonly content: string
  readonly createdAt: number
}

type Reply = { readonly status: number; readonly body: unknown; readonly text?: string }

/**
 * A Files API of OpenAI's shape under `prefix` (Mistral's and Voyage's have it too): `POST
 * {prefix}/files` (multipart, `purpose=batch`), `GET {prefix}/files/{id}/content`, `DELETE
 * {prefix}/files/{id}`; `handle` answers those and leaves every other request to the caller.
 */
export const filesApi = (
  prefix: string,
  nextId: (prefix: string) => string,
  error: (status: number, message: string) => Reply,
  multipart: (raw: string, contentType: string | undefined) => ReadonlyMap<string, { readonly filename: string | undefined; readonly content: string }> | undefined,
  /** A file as the provider's Files API answers it. */
  object: (file: StoredFile) => unknown
) => {
  const stored = new Map<string, StoredFile>()
  const put = (content: string, purpose: string, filename: string) => {
    const file = { id: nextId("file-"), filename, purpose, content, createdAt: Date.now() }
    stored.set(file.id, file)
    return file
  }
  const handle = (request: { readonly method: string; readonly path: string; readonly raw: string; readonly headers: Record<string, unknown> }): Reply | undefined => {
    const path = request.path.split("?")[0]!
    if (request.method === "POST" && path === `${prefix}/files`) {
      const parts = multipart(request.raw, request.headers["content-type"] as string | undefined)
      const file = parts?.get("file")
      if (parts === undefined || file === undefined) return error(400, "'file' is a required property")
      if (parts.get("purpose")?.content !== "batch") return error(400, "'purpose' must be 'batch'")
      return { status: 200, body: object(put(file.content, "batch", file.filename ?? "upload.jsonl")) }
    }
    const one = new RegExp(`^${prefix}/files/([^/]+)(/content)?$`, "u").exec(path)
    if (one === null) return undefined
    const file = stored.get(one[1]!)
    if (file === undefined) return error(404, `No such file: ${one[1]}`)
    if (request.method === "GET" && one[2] !== undefined) return { status: 200, body: null, text: file.content }
    if (request.method === "DELETE" && one[2] === undefined) {
      stored.delete(file.id)
      return { status: 200, body: { id: file.id, object: "file", deleted: true } }
    }
    return error(404, `Unknown request URL: ${request.method} ${request.path}`)
  }
  return { stored: stored as ReadonlyMap<string, StoredFile>, put, handle }
}
