import type { Storage } from "@google-cloud/storage"
import type { EmbeddingProvider } from "@switchyard/core"
import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import * as UpstreamAnswer from "@switchyard/core/upstream/UpstreamAnswer"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Effect, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import * as BatchHttp from "./BatchHttp.ts"
import * as CloudIdentity from "./CloudIdentity.ts"
import { taskTypes } from "./Gemini.ts"
import * as InputType from "./InputType.ts"
import * as TokenEstimate from "./TokenEstimate.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as WireFormat from "./WireFormat.ts"

/**
 * Vertex AI's batch prediction of text embeddings as a provider batch wire format. The
 * requests' JSONL goes to the provider's Cloud Storage prefix (`batch.gcs_uri`) through
 * `@google-cloud/storage`, signed by the same Application Default Credentials as the live calls
 * (`CloudIdentity.googleAuth`); the job is the REST resource
 * `projects/{project}/locations/{location}/batchPredictionJobs` on the provider's host, made with
 * a `gcsSource` and a `gcsDestination` under the same prefix, polled (`state`, `JOB_STATE_*`),
 * cancelled (`:cancel`); its predictions are read from `outputInfo.gcsOutputDirectory`, and the
 * job's folder (input and output) is deleted at the end. Each input of a line is one instance
 * (`{ content, task_type? }`); the job's `modelParameters` carry the width. A prediction line
 * carries its instance back, not a key: lines are matched by their instance.
 */

const Job = Schema.Struct({
  name: Schema.String,
  displayName: Schema.optionalKey(Schema.String),
  state: Schema.optionalKey(Schema.String),
  outputInfo: Schema.optionalKey(Schema.Struct({ gcsOutputDirectory: Schema.optionalKey(Schema.String) })),
  error: Schema.optionalKey(Schema.Struct({ code: Schema.optionalKey(Schema.Finite), message: Schema.optionalKey(Schema.String) }))
})

const decodeJob = UpstreamHttp.decode(Job)
const decodeJobs = UpstreamHttp.decode(Schema.Struct({ batchPredictionJobs: Schema.optionalKey(Schema.Array(Job)) }))

const Prediction = Schema.Struct({
  embeddings: Schema.Struct({
    values: VectorEncoding.FloatVector,
    statistics: Schema.optionalKey(Schema.Struct({ token_count: Schema.optionalKey(Schema.Finite) }))
  })
})

const decodePrediction = UpstreamHttp.decode(Prediction)

const states: Record<string, BatchProvider.State> = {
  JOB_STATE_QUEUED: "pending",
  JOB_STATE_PENDING: "pending",
  JOB_STATE_RUNNING: "pending",
  JOB_STATE_UPDATING: "pending",
  JOB_STATE_PAUSED: "pending",
  JOB_STATE_SUCCEEDED: "completed",
  JOB_STATE_PARTIALLY_SUCCEEDED: "completed",
  JOB_STATE_FAILED: "failed",
  JOB_STATE_CANCELLING: "cancelling",
  JOB_STATE_CANCELLED: "cancelled",
  JOB_STATE_EXPIRED: "expired"
}

const upstreamJob = (job: typeof Job.Type): BatchProvider.UpstreamBatch => ({
  id: job.name,
  state: states[job.state ?? ""] ?? "pending",
  results: job.outputInfo?.gcsOutputDirectory === undefined ? [] : [job.outputInfo.gcsOutputDirectory],
  errors: job.error?.message === undefined ? [] : [{ code: String(job.error.code ?? "failed"), message: job.error.message }]
})

// Vertex's published limit: 30,000 prompts a batch request of text embeddings (approx: 1 GB file).
const limits: BatchProvider.Limits = { maxRequests: 30_000, maxInputs: 30_000, maxBytes: 1_000_000_000, minRequests: 1 }

/** An instance's key: what a prediction line carries back of it. */
const instanceKey = (instance: unknown): string => {
  const record = BatchHttp.isRecord(instance) ? instance : {}
  return JSON.stringify([record.content ?? null, record.task_type ?? null])
}

/** `gs://bucket/some/path` → its bucket and object path. */
const gsPath = (uri: string) => {
  const match = /^gs:\/\/([^/]+)\/?(.*)$/u.exec(uri)
  return { bucket: match?.[1] ?? "", path: match?.[2] ?? "" }
}

/** The prefix a job's files go under: the provider's `batch.gcs_uri`, with a trailing slash. */
const prefixOf = (connection: EmbeddingProvider.Connection) => {
  const uri = connection.batch?.gcsUri
  return uri === undefined ? undefined : uri.endsWith("/") ? uri : `${uri}/`
}

/** A Cloud Storage failure as a live call's: by the status it carries, else the storage was out of reach. */
const fromStorage = (cause: unknown, now: number): UpstreamError.UpstreamError => {
  const error = cause as { readonly code?: unknown; readonly message?: unknown }
  return typeof error.code === "number" && error.code >= 400
    ? UpstreamAnswer.fromResponse({ status: error.code, headers: {}, body: JSON.stringify({ error: { message: String(error.message ?? "") } }) }, now)
    : UpstreamError.unreachable(`Cloud Storage: ${typeof error.message === "string" ? error.message.slice(0, 300) : "unreachable"}`)
}

export const make = Effect.gen(function*() {
  const http = yield* BatchHttp.make
  // One Storage client per identity and endpoint, made on first use (the library is loaded then).
  const clients = new Map<string, Promise<Storage>>()
  const storageOf = (connection: EmbeddingProvider.Connection) => {
    const identity = connection.identity?.kind === "google" ? connection.identity : undefined
    const endpoint = connection.batch?.storageUrl
    const key = `${identity?.credentialsFile ?? ""}|${endpoint ?? ""}|${process.env.GCE_METADATA_HOST ?? ""}`
    let client = clients.get(key)
    if (client === undefined) {
      client = Promise.all([import("@google-cloud/storage"), CloudIdentity.googleAuth(identity?.credentialsFile)]).then(([{ Storage }, authClient]) =>
        new Storage({
          authClient,
          ...(connection.project !== undefined ? { projectId: connection.project } : {}),
          ...(endpoint !== undefined ? { apiEndpoint: endpoint, useAuthWithCustomEndpoint: true } : {})
        })
      )
      clients.set(key, client)
    }
    return client
  }
  const storage = <A>(connection: EmbeddingProvider.Connection, use: (client: Storage) => Promise<A>) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.tryPromise({ try: () => storageOf(connection).then(use), catch: (cause) => fromStorage(cause, now) }))

  const jobsPath = (connection: EmbeddingProvider.Connection) =>
    `/v1/projects/${encodeURIComponent(connection.project ?? "")}/locations/${encodeURIComponent(connection.location ?? "")}/batchPredictionJobs`
  const url = (connection: EmbeddingProvider.Connection, path: string) => `${connection.baseUrl.replace(/\/+$/u, "")}${path}`
  const headersOf = (connection: EmbeddingProvider.Connection) =>
    Effect.map(CloudIdentity.credentialHeaders(connection, WireFormat.bearer), (credentials) => ({ ...credentials, ...connection.headers }))
  const get = (connection: EmbeddingProvider.Connection, path: string) =>
    Effect.flatMap(headersOf(connection), (headers) => http.json(HttpClientRequest.get(url(connection, path)).pipe(HttpClientRequest.setHeaders(headers))))
  const post = (connection: EmbeddingProvider.Connection, path: string, body: unknown) =>
    Effect.flatMap(headersOf(connection), (headers) => http.json(BatchHttp.jsonRequest("POST", url(connection, path), headers, body)))
  const retrieve = (connection: EmbeddingProvider.Connection, id: string) =>
    get(connection, `/v1/${id}`).pipe(Effect.flatMap(decodeJob), Effect.map(upstreamJob))

  const instancesOf = (request: EmbeddingProvider.UpstreamRequest) =>
    Effect.gen(function*() {
      if (request.input._tag !== "Texts") return yield* WireFormat.unsupported("Vertex AI's text embeddings take text only")
      const purpose = InputType.purposeOf(request.inputType)
      const taskType = purpose === undefined ? undefined : taskTypes[purpose]
      return request.input.texts.map((content) => ({ content, ...(taskType !== undefined ? { task_type: taskType } : {}) }))
    })

  const provider: BatchProvider.BatchProvider = {
    limits,
    requests: (_key, request) =>
      Effect.map(instancesOf(request), (instances) => ({
        lines: instances.map((instance) => JSON.stringify(instance)),
        job: {
          model: request.upstreamModel,
          params: { autoTruncate: false, ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}) }
        }
      })),
    upload: (connection, name, jsonl) =>
      Effect.gen(function*() {
        const prefix = prefixOf(connection)
        if (prefix === undefined) return yield* WireFormat.unsupported("the vertex provider names no batch.gcs_uri")
        const uri = `${prefix}${name}/input.jsonl`
        const { bucket, path } = gsPath(uri)
        yield* storage(connection, (client) => client.bucket(bucket).file(path).save(jsonl, { resumable: false, contentType: "application/jsonl" }))
        return uri
      }),
    create: (connection, input, job) =>
      post(connection, jobsPath(connection), {
        displayName: job.name,
        model: `publishers/google/models/${job.model}`,
        inputConfig: { instancesFormat: "jsonl", gcsSource: { uris: [input] } },
        outputConfig: { predictionsFormat: "jsonl", gcsDestination: { outputUriPrefix: input.replace(/input\.jsonl$/u, "output/") } },
        modelParameters: job.params
      }).pipe(Effect.flatMap(decodeJob), Effect.map(upstreamJob)),
    find: (connection, _input, name) =>
      get(connection, `${jobsPath(connection)}?filter=${encodeURIComponent(`display_name="${name}"`)}`).pipe(
        Effect.flatMap(decodeJobs),
        Effect.map((list) => {
          const found = (list.batchPredictionJobs ?? []).find((job) => job.displayName === name)
          return found === undefined ? undefined : upstreamJob(found)
        })
      ),
    retrieve,
    cancel: (connection, id) => Effect.asVoid(post(connection, `/v1/${id}:cancel`, {})),
    results: (connection, batch) =>
      Effect.forEach(batch.results, (directory) => {
        const { bucket, path } = gsPath(directory)
        return storage(connection, async (client) => {
          const [files] = await client.bucket(bucket).getFiles({ prefix: path.endsWith("/") || path === "" ? path : `${path}/` })
          const texts = await Promise.all(files.filter((f) => f.name.endsWith(".jsonl")).map(async (f) => (await f.download())[0].toString("utf8")))
          return texts.flatMap((text) =>
            BatchHttp.jsonLines(text).flatMap((value): Array<BatchProvider.Result> => {
              if (!BatchHttp.isRecord(value) || value.instance === undefined) return []
              const status = typeof value.status === "string" ? value.status : ""
              const prediction = Array.isArray(value.predictions) ? value.predictions[0] : undefined
              // A failed instance says why in `status`: tried live again, where a lasting failure shows.
              return [status === "" && prediction !== undefined
                ? { customId: instanceKey(value.instance), status: 200, body: prediction }
                : { customId: instanceKey(value.instance), status: 500, body: { error: { message: status || "no prediction" } } }]
            })
          )
        })
      }).pipe(Effect.map((files) => files.flat())),
    answer: (_key, request, lookup) =>
      Effect.gen(function*() {
        const instances = yield* instancesOf(request)
        const read = yield* BatchHttp.perRequest(instances.map(instanceKey), lookup, decodePrediction)
        if (read._tag !== "Read") return read
        const counts = read.values.map((p) => p.embeddings.statistics?.token_count)
        const counted = counts.every((n) => n !== undefined)
        const promptTokens = counted ? counts.reduce<number>((sum, n) => sum + n!, 0) : TokenEstimate.ofInput(request.input)
        const embeddings = yield* VectorEncoding.finish(request, read.values.map((p, index) => ({ index, value: p.embeddings.values })))
        const result: EmbeddingProvider.EmbeddingResult = { embeddings, promptTokens, totalTokens: promptTokens, ...(counted ? {} : { tokensEstimated: true }) }
        return { _tag: "Served", result } satisfies BatchProvider.Answer
      }),
    // The job's folder holds its input and its output: all of it goes.
    cleanup: (connection, input) => {
      const { bucket, path } = gsPath(input.replace(/input\.jsonl$/u, ""))
      return storage(connection, (client) => client.bucket(bucket).deleteFiles({ prefix: path, force: true }))
    }
  }
  return provider
})
