import type { EmbeddingProvider } from "@switchyard/core"
import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import type * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import * as BatchHttp from "./BatchHttp.ts"
import * as OpenAiCompatible from "./OpenAiCompatible.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"

/**
 * OpenAI's Files and Batch API as a provider batch wire format: `POST /files` (multipart,
 * `purpose=batch`) uploads the requests' JSONL, `POST /batches` makes the batch on it
 * (`endpoint` `/v1/embeddings`, `completion_window` `24h`), `GET /batches/{id}` polls it,
 * `POST /batches/{id}/cancel` cancels it, `GET /files/{id}/content` reads its output and error
 * files, `DELETE /files/{id}` deletes the input and them once read. Paths are under the
 * provider's base URL (`https://api.openai.com/v1`). One request line per line of the batch, its
 * body as the live call's; its answer read by the live adapter's reader.
 */

const BatchObject = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  input_file_id: Schema.String,
  output_file_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  error_file_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  errors: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    data: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Struct({
      code: Schema.optionalKey(Schema.NullOr(Schema.String)),
      message: Schema.optionalKey(Schema.NullOr(Schema.String))
    }))))
  })))
})

const BatchList = Schema.Struct({ data: Schema.Array(BatchObject) })
const FileObject = Schema.Struct({ id: Schema.String })

const decodeBatch = UpstreamHttp.decode(BatchObject)
const decodeList = UpstreamHttp.decode(BatchList)
const decodeFile = UpstreamHttp.decode(FileObject)

/** OpenAI's batch statuses, which Voyage's Batch API shares. */
const states: Record<string, BatchProvider.State> = {
  validating: "pending",
  in_progress: "pending",
  finalizing: "pending",
  cancelling: "cancelling",
  completed: "completed",
  failed: "failed",
  expired: "expired",
  cancelled: "cancelled"
}

/** A batch object of OpenAI's shape (Voyage's too) as the port has it. */
const upstreamBatch = (b: typeof BatchObject.Type): BatchProvider.UpstreamBatch => ({
  id: b.id,
  state: states[b.status] ?? "pending",
  results: [b.output_file_id, b.error_file_id].filter((id): id is string => typeof id === "string" && id !== ""),
  errors: (b.errors?.data ?? []).map((e) => ({ code: e.code ?? "failed", message: e.message ?? "the provider batch failed" }))
})


/**
 * Where a Files and Batch API of OpenAI's shape lives and how it is signed: OpenAI's own under
 * the base URL with a bearer key; Azure OpenAI's under `/openai` with `api-version` (see Azure.ts).
 */
export interface Placement {
  /** The URL of a path of the API (`/files`, `/batches/{id}`), with an extra query or none. */
  readonly url: (connection: EmbeddingProvider.Connection, path: string, query?: string) => string
  /** The headers that carry the connection's credential. */
  readonly credentials: (connection: EmbeddingProvider.Connection) => Effect.Effect<Readonly<Record<string, string>>, UpstreamError.UpstreamError>
  /** A request line's `url`, and the `endpoint` a batch is made for. */
  readonly endpoint: string
  /** The dialect a request line's body is written in, as the live call's. */
  readonly dialect: OpenAiCompatible.Dialect
}

// Not UpstreamHttp.joinUrl, which keeps every URL it joined: these paths carry ids.
const trimmed = (connection: EmbeddingProvider.Connection) => connection.baseUrl.replace(/\/+$/u, "")

/** A path of an API under the provider's base URL, signed with its bearer key (OpenAI's, Mistral's, Voyage's). */
export const bearerPlacement = {
  url: (connection: EmbeddingProvider.Connection, path: string, query?: string) =>
    `${trimmed(connection)}${path}${query === undefined ? "" : `?${query}`}`,
  credentials: (connection: EmbeddingProvider.Connection) =>
    Effect.succeed(UpstreamHttp.bearerOf(connection))
}

const openAiPlacement: Placement = { ...bearerPlacement, endpoint: "/v1/embeddings", dialect: OpenAiCompatible.dialects.openai }

/** The answer of an OpenAI-shaped embeddings body, as the live adapter reads it. */
export const readOpenAi = (request: EmbeddingProvider.UpstreamRequest, body: unknown) =>
  OpenAiCompatible.resultOfBody(request, body).pipe(Effect.map((result): EmbeddingProvider.EmbeddingResult => ({
    ...result,
    embeddings: result.embeddings.map((e) => ({ index: e.index, embedding: e.embedding as ReadonlyArray<number> | string }))
  })))

/** OpenAI's published limits of one batch of embeddings: 50,000 requests and inputs, a 200 MB file. */
const limits: BatchProvider.Limits = { maxRequests: 50_000, maxInputs: 50_000, maxBytes: 200_000_000, minRequests: 1 }

/**
 * A Files API of OpenAI's shape (OpenAI's, Azure's, Mistral's, Voyage's) at a placement: GET and
 * POST of its paths, a JSONL upload (`purpose=batch`), result files read, files deleted.
 */
export const filesApi = (http: BatchHttp.BatchHttp, placement: Pick<Placement, "url" | "credentials">) => {
  const headersOf = (connection: EmbeddingProvider.Connection) =>
    placement.credentials(connection).pipe(Effect.map((credentials) => ({ ...credentials, ...connection.headers })))
  const get = (connection: EmbeddingProvider.Connection, path: string, query?: string) =>
    headersOf(connection).pipe(Effect.flatMap((headers) =>
      http.json(HttpClientRequest.get(placement.url(connection, path, query)).pipe(HttpClientRequest.setHeaders(headers)))
    ))
  const post = (connection: EmbeddingProvider.Connection, path: string, body: unknown) =>
    headersOf(connection).pipe(Effect.flatMap((headers) => http.json(BatchHttp.jsonRequest("POST", placement.url(connection, path), headers, body))))
  const deleteFile = (connection: EmbeddingProvider.Connection, id: string) =>
    headersOf(connection).pipe(Effect.flatMap((headers) =>
      http.remove(HttpClientRequest.delete(placement.url(connection, `/files/${encodeURIComponent(id)}`)).pipe(HttpClientRequest.setHeaders(headers)))
    ))
  return {
    get,
    post,
    upload: (connection: EmbeddingProvider.Connection, name: string, jsonl: string) =>
      headersOf(connection).pipe(
        Effect.flatMap((headers) => http.json(BatchHttp.fileUpload(placement.url(connection, "/files"), headers, `${name}.jsonl`, jsonl))),
        Effect.flatMap(decodeFile),
        Effect.map((file) => file.id)
      ),
    /** The result lines of a batch's output and error files. */
    results: (connection: EmbeddingProvider.Connection, batch: BatchProvider.UpstreamBatch) =>
      Effect.forEach(batch.results, (fileId) =>
        headersOf(connection).pipe(
          Effect.flatMap((headers) =>
            http.text(HttpClientRequest.get(placement.url(connection, `/files/${encodeURIComponent(fileId)}/content`)).pipe(HttpClientRequest.setHeaders(headers)))
          ),
          Effect.map(BatchHttp.openAiResults)
        )).pipe(Effect.map((files) => files.flat())),
    /** The input file deleted, and the batch's output and error files (read from the batch, if it was made). */
    cleanup: (
      connection: EmbeddingProvider.Connection,
      input: string,
      batch: Effect.Effect<BatchProvider.UpstreamBatch, UpstreamError.UpstreamError> | undefined
    ) =>
      Effect.gen(function*() {
        yield* deleteFile(connection, input)
        if (batch === undefined) return
        const made = yield* batch.pipe(Effect.catchIf(BatchHttp.gone, () => Effect.succeed(undefined)))
        for (const fileId of made?.results ?? []) yield* deleteFile(connection, fileId)
      })
  }
}

/**
 * A Batch API of OpenAI's shape over its Files API (OpenAI's, Azure's, Voyage's): `POST /batches`
 * with the body `createBody` writes, polled, found by its input file among the newest 100,
 * cancelled, its output and error files read and deleted with its input. What a request line is
 * and how its answer reads is the caller's.
 */
export const batchesApi = (
  files: ReturnType<typeof filesApi>,
  createBody: (input: string, job: BatchProvider.Job & { readonly name: string }) => unknown
): Omit<BatchProvider.BatchProvider, "limits" | "requests" | "answer"> => {
  const retrieve = (connection: EmbeddingProvider.Connection, id: string) =>
    files.get(connection, `/batches/${encodeURIComponent(id)}`).pipe(Effect.flatMap(decodeBatch), Effect.map(upstreamBatch))
  return {
    upload: files.upload,
    create: (connection, input, job) => files.post(connection, "/batches", createBody(input, job)).pipe(Effect.flatMap(decodeBatch), Effect.map(upstreamBatch)),
    // The list has no filter by file: its newest 100 batches are looked through.
    find: (connection, input) =>
      files.get(connection, "/batches", "limit=100").pipe(
        Effect.flatMap(decodeList),
        Effect.map((list) => {
          const found = list.data.find((b) => b.input_file_id === input)
          return found === undefined ? undefined : upstreamBatch(found)
        })
      ),
    retrieve,
    cancel: (connection, id) => Effect.asVoid(files.post(connection, `/batches/${encodeURIComponent(id)}/cancel`, {})),
    results: files.results,
    cleanup: (connection, input, id) => files.cleanup(connection, input, id === undefined ? undefined : retrieve(connection, id))
  }
}

export const makeWith = Effect.fnUntraced(function*(placement: Placement) {
  const provider: BatchProvider.BatchProvider = {
    ...batchesApi(filesApi(yield* BatchHttp.make, placement), (input, job) => ({
      input_file_id: input,
      endpoint: placement.endpoint,
      completion_window: "24h",
      metadata: { switchyard_job: job.name }
    })),
    limits,
    requests: (key, request) =>
      Effect.map(OpenAiCompatible.requestBody(placement.dialect, request), (body) => ({
        lines: [JSON.stringify({ custom_id: key, method: "POST", url: placement.endpoint, body })],
        job: { model: request.upstreamModel, params: {} }
      })),
    answer: (key, request, lookup) => BatchHttp.single(key, lookup, (body) => readOpenAi(request, body))
  }
  return provider
})

export const make = makeWith(openAiPlacement)
