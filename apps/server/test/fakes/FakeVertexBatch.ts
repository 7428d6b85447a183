import { CRC32C } from "@google-cloud/storage"
import * as Crypto from "node:crypto"
import * as FakeBatchJobs from "./FakeBatchJobs.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * Vertex AI's batch prediction of text embeddings and the Cloud Storage JSON API it reads and
 * writes, on one fake Google host, as their REST references describe them: `POST
 * /v1/projects/{p}/locations/{l}/batchPredictionJobs` (`displayName`, `model`
 * `publishers/google/models/{m}`, a `jsonl` `gcsSource` and `gcsDestination`,
 * `modelParameters`), `GET .../batchPredictionJobs` (`filter=display_name="..."`), `GET
 * .../batchPredictionJobs/{id}` (`state` `JOB_STATE_*`, `outputInfo.gcsOutputDirectory`), `POST
 * .../{id}:cancel`; objects uploaded as `@google-cloud/storage` sends them (`POST
 * /upload/storage/v1/b/{bucket}/o?uploadType=multipart`), listed, read (`?alt=media`) and
 * deleted under `/storage/v1/b/{bucket}/o`, each with its MD5 and CRC32C. It plays the GCE/GKE
 * metadata server too (`GCE_METADATA_HOST`): every other call wants a bearer token it issued. A
 * job's instances (`{ content, task_type? }`) are embedded a few at each poll; their predictions
 * go, each with its instance, to `predictions_00001.jsonl` under the destination.
 */
export interface Options extends FakeBatchJobs.JobsOptions {
  readonly project?: string
  readonly bucket: string
}

interface Instance {
  readonly content: string
  readonly task_type?: string
}

interface StoredObject {
  readonly name: string
  readonly data: Buffer
  readonly contentType: string
}

export interface FakeVertexBatch extends FakeUpstream.FakeServer {
  /** `host:port`, for `GCE_METADATA_HOST`. */
  readonly host: string
  readonly jobs: FakeBatchJobs.Jobs<Instance, string>
  readonly objects: ReadonlyMap<string, StoredObject>
  readonly tokensIssued: () => number
}

const statuses: Record<number, string> = { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND" }
const error = (status: number, message: string) => ({ status, body: { error: { code: status, message, status: statuses[status] ?? "UNAVAILABLE" } } })

const states: Record<FakeBatchJobs.JobState, string> = {
  queued: "JOB_STATE_PENDING",
  running: "JOB_STATE_RUNNING",
  succeeded: "JOB_STATE_SUCCEEDED",
  failed: "JOB_STATE_FAILED",
  expired: "JOB_STATE_EXPIRED",
  cancelling: "JOB_STATE_CANCELLING",
  cancelled: "JOB_STATE_CANCELLED"
}

const crc32c = (data: Buffer) => {
  const hash = new CRC32C()
  hash.update(data)
  return hash.toString()
}

/** The parts of a multipart/related body (the object's metadata, then its bytes). */
const related = (raw: string, contentType: string | undefined) => {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/u.exec(contentType ?? "")
  if (boundary === null) return undefined
  const marker = `--${boundary[1] ?? boundary[2]}`
  return raw.split(marker).slice(1).filter((piece) => !piece.startsWith("--")).map((piece) => {
    const split = piece.indexOf("\r\n\r\n")
    return { head: piece.slice(0, split), body: piece.slice(split + 4, piece.length - 2) }
  })
}

export const start = async (options: Options): Promise<FakeVertexBatch> => {
  const project = options.project ?? "fake-project"
  const issued = new Set<string>()
  const jobs = FakeBatchJobs.jobs<Instance, string>(options)
  const objects = new Map<string, StoredObject>()

  const resource = (bucket: string, object: StoredObject) => ({
    kind: "storage#object",
    id: `${bucket}/${object.name}/1`,
    name: object.name,
    bucket,
    generation: "1",
    metageneration: "1",
    contentType: object.contentType,
    size: String(object.data.byteLength),
    md5Hash: Crypto.createHash("md5").update(object.data).digest("base64"),
    crc32c: crc32c(object.data),
    timeCreated: new Date().toISOString(),
    updated: new Date().toISOString()
  })

  const metadata = (request: FakeUpstream.RecordedRequest, path: string) => {
    if (request.headers["metadata-flavor"] !== "Google") return { status: 403, body: "Missing Metadata-Flavor:Google header." }
    const headers = { "metadata-flavor": "Google" }
    if (path === "/computeMetadata/v1/instance" || path === "/computeMetadata/v1/instance/") {
      return { status: 200, body: {}, headers, text: "attributes/\nid\nservice-accounts/\n" }
    }
    if (path === "/computeMetadata/v1/instance/service-accounts/default/token") {
      const token = `ya29.${Crypto.randomBytes(24).toString("base64url")}`
      issued.add(token)
      return { status: 200, headers, body: { access_token: token, expires_in: 3599, token_type: "Bearer" } }
    }
    if (path === "/computeMetadata/v1/project/project-id") return { status: 200, headers, body: null, text: project }
    return { status: 404, body: "Not Found", headers }
  }

  const jobPath = (job: FakeBatchJobs.FakeJob<Instance, string>) => `projects/${project}/locations/${job.meta.location}/batchPredictionJobs/${job.id}`
  const jobObject = (job: FakeBatchJobs.FakeJob<Instance, string>) => ({
    name: jobPath(job),
    displayName: job.name,
    model: job.meta.model,
    inputConfig: { instancesFormat: "jsonl", gcsSource: { uris: [job.meta.input] } },
    outputConfig: { predictionsFormat: "jsonl", gcsDestination: { outputUriPrefix: job.meta.output } },
    modelParameters: job.meta.parameters,
    state: states[job.state],
    ...(job.meta.directory !== undefined ? { outputInfo: { gcsOutputDirectory: job.meta.directory } } : {}),
    ...(job.state === "failed" ? { error: { code: 13, message: "The job failed" } } : {}),
    createTime: new Date(job.createdAt).toISOString()
  })

  const run = (model: string, parameters: Record<string, unknown>) => (instance: Instance) => {
    const width = typeof parameters.outputDimensionality === "number" ? parameters.outputDimensionality : 768
    return JSON.stringify({
      instance,
      predictions: [{
        embeddings: {
          statistics: { token_count: FakeUpstream.wordCount(instance.content), truncated: false },
          values: FakeUpstream.vectorFor(`${model}|${instance.task_type ?? ""}|${instance.content}`, width)
        }
      }],
      status: ""
    })
  }

  const ended = (job: FakeBatchJobs.FakeJob<Instance, string>) => {
    if (job.outputs.length === 0) return
    const directory = `${String(job.meta.output).replace(/\/?$/u, "/")}prediction-model-${job.id}`
    const { bucket, name } = gs(`${directory}/predictions_00001.jsonl`)
    objects.set(`${bucket}/${name}`, { name, data: Buffer.from(`${job.outputs.join("\n")}\n`), contentType: "application/jsonl" })
    ;(job.meta as Record<string, unknown>).directory = directory
  }

  const gs = (uri: string) => {
    const m = /^gs:\/\/([^/]+)\/(.*)$/u.exec(uri)
    return { bucket: m?.[1] ?? "", name: m?.[2] ?? "" }
  }

  const create = (request: FakeUpstream.RecordedRequest, location: string) => {
    const body = request.body
    if (!FakeUpstream.isRecord(body) || typeof body.displayName !== "string") return error(400, "displayName is required")
    const model = typeof body.model === "string" ? /^publishers\/google\/models\/([^/]+)$/u.exec(body.model)?.[1] : undefined
    if (model === undefined) return error(400, "model must name a publisher model")
    const input = body.inputConfig as { instancesFormat?: unknown; gcsSource?: { uris?: ReadonlyArray<unknown> } } | undefined
    const output = body.outputConfig as { predictionsFormat?: unknown; gcsDestination?: { outputUriPrefix?: unknown } } | undefined
    if (input?.instancesFormat !== "jsonl" || output?.predictionsFormat !== "jsonl" || typeof output.gcsDestination?.outputUriPrefix !== "string") {
      return error(400, "inputConfig and outputConfig are jsonl on Cloud Storage")
    }
    const uri = input.gcsSource?.uris?.[0]
    const { bucket, name } = gs(typeof uri === "string" ? uri : "")
    const stored = objects.get(`${bucket}/${name}`)
    if (stored === undefined) return error(400, `No object at ${String(uri)}`)
    const instances = FakeBatchJobs.jsonLines(stored.data.toString("utf8")) as Array<Instance>
    if (instances.length > 30_000 || instances.some((i) => typeof i.content !== "string")) return error(400, "Each instance needs content (30,000 at most)")
    const parameters = FakeUpstream.isRecord(body.modelParameters) ? body.modelParameters : {}
    const job = jobs.create(body.displayName, instances, { model: body.model, input: uri, output: output.gcsDestination.outputUriPrefix, parameters, location, name: model })
    return { status: 200, body: jobObject(job) }
  }

  const storage = (request: FakeUpstream.RecordedRequest, url: URL) => {
    const upload = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/u.exec(url.pathname)
    if (upload !== null && request.method === "POST") {
      const parts = related(request.raw, request.headers["content-type"])
      const name = url.searchParams.get("name")
      if (url.searchParams.get("uploadType") !== "multipart" || parts === undefined || parts.length !== 2 || name === null) {
        return error(400, "A multipart upload of the object's metadata and bytes is expected")
      }
      const object = { name, data: Buffer.from(parts[1]!.body), contentType: /content-type: *([^\r\n]+)/iu.exec(parts[1]!.head)?.[1] ?? "application/octet-stream" }
      objects.set(`${upload[1]}/${name}`, object)
      return { status: 200, body: resource(upload[1]!, object) }
    }
    const list = /^\/storage\/v1\/b\/([^/]+)\/o$/u.exec(url.pathname)
    if (list !== null && request.method === "GET") {
      const prefix = url.searchParams.get("prefix") ?? ""
      const items = [...objects.entries()].filter(([key]) => key.startsWith(`${list[1]}/${prefix}`)).map(([, o]) => resource(list[1]!, o))
      return { status: 200, body: { kind: "storage#objects", items } }
    }
    const one = /^\/storage\/v1\/b\/([^/]+)\/o\/(.+)$/u.exec(url.pathname)
    if (one === null) return undefined
    const key = `${one[1]}/${decodeURIComponent(one[2]!)}`
    const object = objects.get(key)
    if (object === undefined) return error(404, `No such object: ${key}`)
    if (request.method === "DELETE") {
      objects.delete(key)
      return { status: 204, body: null, text: "" }
    }
    if (request.method === "GET" && url.searchParams.get("alt") === "media") {
      const r = resource(one[1]!, object)
      return { status: 200, body: null, text: object.data.toString("utf8"), headers: { "x-goog-hash": `crc32c=${r.crc32c},md5=${r.md5Hash}` } }
    }
    if (request.method === "GET") return { status: 200, body: resource(one[1]!, object) }
    return error(404, "Not Found")
  }

  const handle = (request: FakeUpstream.RecordedRequest) => {
    const url = new URL(request.path, "http://fake")
    if (url.pathname.startsWith("/computeMetadata/")) return metadata(request, url.pathname)
    if (!issued.has(FakeUpstream.bearer(request) ?? "")) return error(401, "Request had invalid authentication credentials. Expected OAuth 2 access token.")
    if (url.pathname.includes("/storage/v1/")) {
      if (!url.pathname.includes(`/b/${options.bucket}/`) && !url.pathname.endsWith(`/b/${options.bucket}/o`)) return error(404, "The specified bucket does not exist.")
      return storage(request, url) ?? error(404, "Not Found")
    }
    const collection = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/batchPredictionJobs$/u.exec(url.pathname)
    if (collection !== null && collection[1] !== project) return error(403, `Permission denied on resource project ${collection[1]}.`)
    if (collection !== null && request.method === "POST") return create(request, collection[2]!)
    if (collection !== null && request.method === "GET") {
      const wanted = /^display_name="(.*)"$/u.exec(url.searchParams.get("filter") ?? "")?.[1]
      const found = [...jobs.all.values()].filter((j) => wanted === undefined || j.name === wanted)
      return { status: 200, body: found.length === 0 ? {} : { batchPredictionJobs: found.map(jobObject) } }
    }
    const one = /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/batchPredictionJobs\/([^/:]+)(:cancel)?$/u.exec(url.pathname)
    const job = one === null ? undefined : jobs.all.get(one[1]!)
    if (job === undefined) return error(404, "Not Found")
    if (request.method === "POST" && one![2] !== undefined) {
      jobs.cancel(job)
      return { status: 200, body: {} }
    }
    if (request.method === "GET" && one![2] === undefined) {
      jobs.advance(job, run(String(job.meta.name), job.meta.parameters as Record<string, unknown>), ended)
      return { status: 200, body: jobObject(job) }
    }
    return error(404, "Not Found")
  }

  const server = await FakeUpstream.start({ basePath: "", errorBody: (status, message) => error(status, message).body, handle })
  return { ...server, host: server.url.replace(/^http:\/\//u, ""), jobs, objects, tokensIssued: () => issued.size }
}
