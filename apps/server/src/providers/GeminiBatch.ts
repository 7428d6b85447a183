import type { EmbeddingProvider } from "@switchyard/core"
import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect, Redacted, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import * as BatchHttp from "./BatchHttp.ts"
import * as Gemini from "./Gemini.ts"
import * as TokenEstimate from "./TokenEstimate.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"
import * as VectorEncoding from "./VectorEncoding.ts"

/**
 * The Gemini API's batch embeddings as a provider batch wire format, with the key in
 * `x-goog-api-key`. The requests' JSONL goes up through the Files API's resumable upload
 * (`POST {origin}/upload/v1beta/files` with `X-Goog-Upload-Command: start`, then the bytes to
 * the `X-Goog-Upload-URL` it answers, 8 MiB at a time, the last with `upload, finalize`);
 * `POST /models/{model}:asyncBatchEmbedContent` makes the job on it (`batch.input_config.file_name`),
 * `GET /batches/{id}` polls the operation (`metadata.state`, `BATCH_STATE_*`), `POST
 * /batches/{id}:cancel` cancels it, `GET /files/{id}:download?alt=media` reads its responses file,
 * `DELETE /files/{id}` deletes it and the input. Each input of a line is one request
 * (`{ key, request }`, an `EmbedContentRequest` as the live call writes it); each result line is
 * `{ key, response: { embedding: { values }, tokenCount? } }` or `{ key, error }`.
 */

const FileUploaded = Schema.Struct({ file: Schema.Struct({ name: Schema.String }) })

const Operation = Schema.Struct({
  name: Schema.String,
  metadata: Schema.optionalKey(Schema.Struct({
    state: Schema.optionalKey(Schema.String),
    inputConfig: Schema.optionalKey(Schema.Struct({ fileName: Schema.optionalKey(Schema.String) })),
    output: Schema.optionalKey(Schema.Struct({ responsesFile: Schema.optionalKey(Schema.String) }))
  })),
  response: Schema.optionalKey(Schema.Struct({ responsesFile: Schema.optionalKey(Schema.String) })),
  error: Schema.optionalKey(Schema.Struct({ code: Schema.optionalKey(Schema.Finite), message: Schema.optionalKey(Schema.String) }))
})

const Operations = Schema.Struct({ operations: Schema.optionalKey(Schema.Array(Operation)) })

/** One result's body: an `EmbedContentResponse`, its tokens as `tokenCount` (int64, a string) or usage metadata. */
const Embedded = Schema.Struct({
  embedding: Schema.Struct({ values: VectorEncoding.FloatVector }),
  tokenCount: Schema.optionalKey(Schema.Union([Schema.Finite, Schema.NumberFromString])),
  usageMetadata: Schema.optionalKey(Schema.Struct({ promptTokenCount: Schema.optionalKey(Schema.Finite) }))
})

const decodeUploaded = UpstreamHttp.decode(FileUploaded)
const decodeOperation = UpstreamHttp.decode(Operation)
const decodeOperations = UpstreamHttp.decode(Operations)
const decodeEmbedded = UpstreamHttp.decode(Embedded)

const states: Record<string, BatchProvider.State> = {
  BATCH_STATE_PENDING: "pending",
  BATCH_STATE_RUNNING: "pending",
  BATCH_STATE_SUCCEEDED: "completed",
  BATCH_STATE_FAILED: "failed",
  BATCH_STATE_CANCELLED: "cancelled",
  BATCH_STATE_EXPIRED: "expired"
}

const upstreamBatch = (operation: typeof Operation.Type): BatchProvider.UpstreamBatch => {
  const file = operation.metadata?.output?.responsesFile ?? operation.response?.responsesFile
  return {
    id: operation.name,
    state: states[operation.metadata?.state ?? ""] ?? "pending",
    results: file === undefined ? [] : [file],
    errors: operation.error?.message === undefined ? [] : [{ code: String(operation.error.code ?? "failed"), message: operation.error.message }]
  }
}

/** The Files API's chunk: a multiple of 256 KiB, as its resumable protocol wants. */
const chunkBytes = 8 * 1024 * 1024

// approx: the Gemini API documents a 2 GB input file; a job's requests are not capped there.
const limits: BatchProvider.Limits = { maxRequests: 1_000_000, maxInputs: 1_000_000, maxBytes: 2_000_000_000, minRequests: 1 }

const base = (connection: EmbeddingProvider.Connection) => connection.baseUrl.replace(/\/+$/u, "")

/** `https://host/v1beta` → `https://host/upload/v1beta/files`: the upload route beside the API's. */
const uploadUrl = (connection: EmbeddingProvider.Connection) => {
  const url = new URL(base(connection))
  return `${url.origin}/upload${url.pathname}/files`
}

const inputCount = (request: EmbeddingProvider.UpstreamRequest) =>
  request.input._tag === "Texts" ? request.input.texts.length : request.input._tag === "Tokens" ? request.input.tokens.length : request.input.items.length

export const make = Effect.gen(function*() {
  const http = yield* BatchHttp.make
  const headersOf = (connection: EmbeddingProvider.Connection): Readonly<Record<string, string>> => ({
    ...(connection.apiKey === undefined ? {} : { "x-goog-api-key": Redacted.value(connection.apiKey) }),
    ...connection.headers
  })
  const get = (connection: EmbeddingProvider.Connection, path: string) =>
    HttpClientRequest.get(`${base(connection)}${path}`).pipe(HttpClientRequest.setHeaders(headersOf(connection)))
  const post = (connection: EmbeddingProvider.Connection, path: string, body: unknown) =>
    http.json(BatchHttp.jsonRequest("POST", `${base(connection)}${path}`, headersOf(connection), body))
  const retrieve = (connection: EmbeddingProvider.Connection, id: string) =>
    http.json(get(connection, `/${id}`)).pipe(Effect.flatMap(decodeOperation), Effect.map(upstreamBatch))
  const deleteFile = (connection: EmbeddingProvider.Connection, name: string) =>
    http.remove(HttpClientRequest.delete(`${base(connection)}/${name}`).pipe(HttpClientRequest.setHeaders(headersOf(connection))))

  const upload = Effect.fnUntraced(function*(connection: EmbeddingProvider.Connection, name: string, jsonl: string) {
    const bytes = new TextEncoder().encode(jsonl)
    const started = yield* http.send(BatchHttp.jsonRequest("POST", uploadUrl(connection), {
      ...headersOf(connection),
      "x-goog-upload-protocol": "resumable",
      "x-goog-upload-command": "start",
      "x-goog-upload-header-content-length": String(bytes.byteLength),
      "x-goog-upload-header-content-type": "application/jsonl"
    }, { file: { display_name: name } }))
    const session = started.headers["x-goog-upload-url"]
    if (session === undefined) return yield* UpstreamError.invalidResponse("the Files API answered no X-Goog-Upload-URL")
    let offset = 0
    for (;;) {
      const chunk = bytes.subarray(offset, offset + chunkBytes)
      const last = offset + chunk.byteLength >= bytes.byteLength
      const answered = yield* http.send(HttpClientRequest.post(session).pipe(
        HttpClientRequest.setHeaders({
          ...headersOf(connection),
          "x-goog-upload-command": last ? "upload, finalize" : "upload",
          "x-goog-upload-offset": String(offset)
        }),
        HttpClientRequest.bodyUint8Array(chunk, "application/octet-stream")
      ))
      offset += chunk.byteLength
      if (last) {
        if (answered.headers["x-goog-upload-status"] !== "final") return yield* UpstreamError.invalidResponse("the Files API did not finalize the upload")
        const json = yield* answered.json.pipe(Effect.mapError(() => UpstreamError.invalidResponse("the Files API's answer is not JSON")))
        return (yield* decodeUploaded(json)).file.name
      }
    }
  })

  const provider: BatchProvider.BatchProvider = {
    limits,
    requests: (key, request) =>
      Effect.map(Gemini.requestBody(request), (body) => ({
        lines: body.requests.map((one, i) => JSON.stringify({ key: `${key}.${i}`, request: one })),
        job: { model: request.upstreamModel.replace(/^models\//u, ""), params: {} }
      })),
    upload,
    create: (connection, input, job) =>
      post(connection, `/models/${encodeURIComponent(job.model)}:asyncBatchEmbedContent`, {
        batch: { display_name: job.name, input_config: { file_name: input } }
      }).pipe(Effect.flatMap(decodeOperation), Effect.map(upstreamBatch)),
    // The API's list has no filter: its newest 100 jobs are looked through for the input file.
    find: (connection, input) =>
      http.json(get(connection, "/batches?pageSize=100")).pipe(
        Effect.flatMap(decodeOperations),
        Effect.map((list) => {
          const found = (list.operations ?? []).find((o) => o.metadata?.inputConfig?.fileName === input)
          return found === undefined ? undefined : upstreamBatch(found)
        })
      ),
    retrieve,
    cancel: (connection, id) => Effect.asVoid(post(connection, `/${id}:cancel`, {})),
    results: (connection, batch) =>
      Effect.forEach(batch.results, (file) =>
        http.text(get(connection, `/${file}:download?alt=media`)).pipe(Effect.map((text) =>
          BatchHttp.jsonLines(text).flatMap((value): Array<BatchProvider.Result> => {
            if (!BatchHttp.isRecord(value) || typeof value.key !== "string") return []
            if (BatchHttp.isRecord(value.error)) {
              return [{ customId: value.key, status: BatchHttp.httpStatusOfRpc(value.error.code), body: { error: value.error } }]
            }
            return [{ customId: value.key, status: 200, body: value.response }]
          })
        ))).pipe(Effect.map((files) => files.flat())),
    answer: (key, request, lookup) =>
      Effect.gen(function*() {
        const keys = Array.from({ length: inputCount(request) }, (_, i) => `${key}.${i}`)
        const read = yield* BatchHttp.perRequest(keys, lookup, decodeEmbedded)
        if (read._tag !== "Read") return read
        const answers = read.values
        const counts = answers.map((a) => a.usageMetadata?.promptTokenCount ?? a.tokenCount)
        const counted = counts.every((n) => n !== undefined)
        const promptTokens = counted ? counts.reduce<number>((sum, n) => sum + n!, 0) : TokenEstimate.ofInput(request.input)
        const embeddings = yield* VectorEncoding.finish(request, answers.map((a, index) => ({ index, value: a.embedding.values })))
        const result: EmbeddingProvider.EmbeddingResult = {
          embeddings,
          promptTokens,
          totalTokens: promptTokens,
          ...(counted ? {} : { tokensEstimated: true })
        }
        return { _tag: "Served", result } satisfies BatchProvider.Answer
      }),
    cleanup: (connection, input, id) =>
      Effect.gen(function*() {
        yield* deleteFile(connection, input)
        if (id === undefined) return
        const batch = yield* retrieve(connection, id).pipe(Effect.catchIf(BatchHttp.gone, () => Effect.succeed(undefined)))
        for (const file of batch?.results ?? []) yield* deleteFile(connection, file)
      })
  }
  return provider
})
