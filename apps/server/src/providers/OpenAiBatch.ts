import type { EmbeddingProvider } from "@switchyard/core"
import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import * as UpstreamAnswer from "@switchyard/core/upstream/UpstreamAnswer"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Duration, Effect, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import * as UpstreamHttp from "./UpstreamHttp.ts"
import * as WireFormat from "./WireFormat.ts"

/**
 * OpenAI's Files and Batch API as a provider batch wire format: `POST /files` (multipart,
 * `purpose=batch`) uploads the requests' JSONL, `POST /batches` makes the batch on it
 * (`endpoint` `/v1/embeddings`, `completion_window` `24h`), `GET /batches/{id}` polls it,
 * `POST /batches/{id}/cancel` cancels it, `GET /files/{id}/content` reads its output and error
 * files. Paths are under the provider's base URL (`https://api.openai.com/v1`).
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

const upstreamBatch = (b: typeof BatchObject.Type): BatchProvider.UpstreamBatch => ({
  id: b.id,
  state: states[b.status] ?? "pending",
  inputFileId: b.input_file_id,
  outputFileId: b.output_file_id ?? undefined,
  errorFileId: b.error_file_id ?? undefined,
  errors: (b.errors?.data ?? []).map((e) => ({ code: e.code ?? "failed", message: e.message ?? "the provider batch failed" }))
})

/** How long one call of the batch API may take (an upload or a download of a unit's lines). */
const callTimeout = Duration.seconds(120)

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The results of an output or error file: one per JSON line with a `custom_id`. */
const parseResults = (text: string): ReadonlyArray<BatchProvider.Result> => {
  const results: Array<BatchProvider.Result> = []
  for (const line of text.split("\n")) {
    if (line.trim().length === 0) continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      continue
    }
    if (!isRecord(value) || typeof value.custom_id !== "string") continue
    const response = isRecord(value.response) ? value.response : undefined
    results.push(
      response !== undefined && typeof response.status_code === "number"
        ? { customId: value.custom_id, status: response.status_code, body: response.body }
        : { customId: value.custom_id, status: 0, body: value.error ?? null }
    )
  }
  return results
}

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
}

// Not UpstreamHttp.joinUrl, which keeps every URL it joined: these paths carry ids.
const trimmed = (connection: EmbeddingProvider.Connection) => connection.baseUrl.replace(/\/+$/u, "")

const openAiPlacement: Placement = {
  url: (connection, path, query) => `${trimmed(connection)}${path}${query === undefined ? "" : `?${query}`}`,
  credentials: (connection) =>
    Effect.succeed(connection.apiKey === undefined ? {} : WireFormat.bearer(Redacted.value(connection.apiKey))),
  endpoint: "/v1/embeddings"
}

export const makeWith = Effect.fnUntraced(function*(placement: Placement) {
  const client = yield* HttpClient.HttpClient

  const headersOf = (connection: EmbeddingProvider.Connection) =>
    placement.credentials(connection).pipe(Effect.map((credentials) => ({ ...credentials, ...connection.headers })))

  // Sends one request; the 2xx response, else the provider's failure as an UpstreamError.
  const send = (request: HttpClientRequest.HttpClientRequest) =>
    Effect.gen(function*() {
      const response = yield* client.execute(request)
      if (response.status >= 200 && response.status < 300) return response
      const text = yield* Effect.orElseSucceed(response.text, () => "")
      return yield* UpstreamAnswer.fromResponse(
        { status: response.status, headers: response.headers, body: text.slice(0, 8192) },
        yield* Clock.currentTimeMillis
      )
    }).pipe(
      Effect.catchTag("HttpClientError", (error) => Effect.fail(UpstreamHttp.fromHttpClientError(error))),
      Effect.timeoutOrElse({ duration: callTimeout, orElse: () => Effect.fail(UpstreamError.timeout(Duration.toMillis(callTimeout))) })
    )

  const json = (response: HttpClientResponse.HttpClientResponse) =>
    response.arrayBuffer.pipe(
      Effect.catchTag("HttpClientError", (error) => Effect.fail(UpstreamHttp.fromHttpClientError(error))),
      Effect.flatMap((bytes) => UpstreamHttp.parseJson(new Uint8Array(bytes)))
    )

  const get = (connection: EmbeddingProvider.Connection, path: string, query?: string) =>
    headersOf(connection).pipe(
      Effect.flatMap((headers) => send(HttpClientRequest.get(placement.url(connection, path, query)).pipe(HttpClientRequest.setHeaders(headers))))
    )

  const postJson = (connection: EmbeddingProvider.Connection, path: string, body: unknown) =>
    headersOf(connection).pipe(Effect.flatMap((headers) =>
      send(HttpClientRequest.post(placement.url(connection, path)).pipe(
        HttpClientRequest.setHeaders(headers),
        HttpClientRequest.acceptJson,
        HttpClientRequest.bodyText(JSON.stringify(body), "application/json")
      ))
    ))

  const provider: BatchProvider.BatchProvider = {
    requestLine: (customId, body) => JSON.stringify({ custom_id: customId, method: "POST", url: placement.endpoint, body }),
    upload: (connection, filename, jsonl) =>
      headersOf(connection).pipe(Effect.flatMap((headers) => {
        const form = new FormData()
        form.append("purpose", "batch")
        form.append("file", new Blob([jsonl], { type: "application/jsonl" }), filename)
        return send(HttpClientRequest.post(placement.url(connection, "/files")).pipe(
          HttpClientRequest.setHeaders(headers),
          HttpClientRequest.acceptJson,
          HttpClientRequest.bodyFormData(form)
        ))
      })).pipe(Effect.flatMap(json), Effect.flatMap(decodeFile), Effect.map((file) => file.id)),
    create: (connection, inputFileId, metadata) =>
      postJson(connection, "/batches", { input_file_id: inputFileId, endpoint: placement.endpoint, completion_window: "24h", metadata }).pipe(
        Effect.flatMap(json),
        Effect.flatMap(decodeBatch),
        Effect.map(upstreamBatch)
      ),
    find: (connection, inputFileId) =>
      get(connection, "/batches", "limit=100").pipe(
        Effect.flatMap(json),
        Effect.flatMap(decodeList),
        Effect.map((list) => {
          const found = list.data.find((b) => b.input_file_id === inputFileId)
          return found === undefined ? undefined : upstreamBatch(found)
        })
      ),
    retrieve: (connection, id) =>
      get(connection, `/batches/${encodeURIComponent(id)}`).pipe(Effect.flatMap(json), Effect.flatMap(decodeBatch), Effect.map(upstreamBatch)),
    cancel: (connection, id) =>
      postJson(connection, `/batches/${encodeURIComponent(id)}/cancel`, {}).pipe(
        Effect.flatMap(json),
        Effect.flatMap(decodeBatch),
        Effect.map(upstreamBatch)
      ),
    results: (connection, fileId) =>
      get(connection, `/files/${encodeURIComponent(fileId)}/content`).pipe(
        Effect.flatMap((response) => response.text),
        Effect.catchTag("HttpClientError", (error) => Effect.fail(UpstreamHttp.fromHttpClientError(error))),
        Effect.map(parseResults)
      )
  }
  return provider
})

export const make = makeWith(openAiPlacement)
