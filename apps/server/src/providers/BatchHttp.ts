import type { EmbeddingProvider } from "@switchyard/core"
import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Duration, Effect } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import * as UpstreamHttp from "./UpstreamHttp.ts"

/**
 * The upstream HTTP step every provider batch wire format shares (OpenAiBatch.ts, MistralBatch.ts,
 * VoyageBatch.ts, GeminiBatch.ts, VertexBatch.ts): one call within its time limit through
 * UpstreamHttp.send (the step every live call takes: anything but a 2xx answer is the provider's
 * failure as an `UpstreamError`), a 2xx answer read as JSON or text; and the result lines of OpenAI's shape, which Mistral's and Voyage's batches share.
 */

/** How long one call of a batch API may take (an upload or a download of a unit's lines). */
const callTimeout = Duration.seconds(120)

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The JSON values of a JSONL text's lines; a line that is not JSON is left out. */
export const jsonLines = (text: string): Array<unknown> => {
  const values: Array<unknown> = []
  for (const line of text.split("\n")) {
    if (line.trim().length === 0) continue
    try {
      values.push(JSON.parse(line))
    } catch {
      // A line that is not JSON is left out.
    }
  }
  return values
}

/**
 * The results of an output or error file of OpenAI's shape: one per JSON line with a `custom_id`,
 * `response: { status_code, body }` or, when none was written, status 0 and the line's `error`.
 */
export const openAiResults = (text: string): ReadonlyArray<BatchProvider.Result> =>
  jsonLines(text).flatMap((value): Array<BatchProvider.Result> => {
    if (!isRecord(value) || typeof value.custom_id !== "string") return []
    const response = isRecord(value.response) ? value.response : undefined
    return [
      response !== undefined && typeof response.status_code === "number"
        ? { customId: value.custom_id, status: response.status_code, body: response.body }
        : { customId: value.custom_id, status: 0, body: value.error ?? null }
    ]
  })

/**
 * A line sent as one request: its answer read from the result under its key by the live
 * adapter's reader; the provider's failure of it; or missing.
 */
export const single = (
  key: string,
  lookup: (customId: string) => BatchProvider.Result | undefined,
  read: (body: unknown) => Effect.Effect<EmbeddingProvider.EmbeddingResult, UpstreamError.UpstreamError>
): Effect.Effect<BatchProvider.Answer, UpstreamError.UpstreamError> => {
  const result = lookup(key)
  if (result === undefined) return Effect.succeed({ _tag: "Missing" })
  if (result.status !== 200) return Effect.succeed({ _tag: "Failed", status: result.status, body: result.body })
  return Effect.map(read(result.body), (served) => ({ _tag: "Served", result: served }))
}

/**
 * A line sent as one request per input (`keys`, in input order): each result read by `read`; the
 * provider's failure of one of them is the line's; a result missing (or every one) leaves the
 * line unanswered.
 */
export const perRequest = <A>(
  keys: ReadonlyArray<string>,
  lookup: (customId: string) => BatchProvider.Result | undefined,
  read: (body: unknown) => Effect.Effect<A, UpstreamError.UpstreamError>
): Effect.Effect<{ readonly _tag: "Read"; readonly values: ReadonlyArray<A> } | Unserved, UpstreamError.UpstreamError> => {
  const results = keys.map(lookup)
  const failed = results.find((r) => r !== undefined && r.status !== 200)
  if (failed !== undefined) return Effect.succeed({ _tag: "Failed", status: failed.status, body: failed.body })
  if (results.some((r) => r === undefined)) return Effect.succeed({ _tag: "Missing" })
  return Effect.map(Effect.forEach(results, (r) => read(r!.body)), (values) => ({ _tag: "Read", values }))
}

/** A line's answer when it was not served. */
export type Unserved = Exclude<BatchProvider.Answer, { readonly _tag: "Served" }>

/** Google's RPC status codes as the HTTP statuses they stand for (a result line's `error.code`). */
export const httpStatusOfRpc = (code: unknown): number => {
  if (typeof code !== "number") return 500
  if (code >= 100) return code
  const statuses: Record<number, number> = { 1: 499, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401 }
  return statuses[code] ?? 500
}

/** The provider says there is no such thing (404): what a deletion wanted. */
export const gone = (error: UpstreamError.UpstreamError): boolean =>
  error.reason._tag === "ModelNotFound" && error.reason.upstream_status === 404

export const make = Effect.gen(function*() {
  const client = yield* HttpClient.HttpClient

  /** Sends one request; the 2xx response, else the provider's failure. */
  const send = (request: HttpClientRequest.HttpClientRequest): Effect.Effect<HttpClientResponse.HttpClientResponse, UpstreamError.UpstreamError> =>
    UpstreamHttp.send(client, request).pipe(
      Effect.timeoutOrElse({ duration: callTimeout, orElse: () => Effect.fail(UpstreamError.timeout(Duration.toMillis(callTimeout))) })
    )

  const bodyOf = <A>(read: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, unknown>) =>
  (response: HttpClientResponse.HttpClientResponse): Effect.Effect<A, UpstreamError.UpstreamError> =>
    read(response).pipe(Effect.mapError(() => UpstreamError.connectionLost("the provider's answer could not be read")))

  const bytes = bodyOf((response) => response.arrayBuffer)

  return {
    send,
    /** The 2xx answer's body as JSON. */
    json: (request: HttpClientRequest.HttpClientRequest) =>
      send(request).pipe(Effect.flatMap(bytes), Effect.flatMap((buffer) => UpstreamHttp.parseJson(new Uint8Array(buffer)))),
    /** The 2xx answer's body as text (a results file). */
    text: (request: HttpClientRequest.HttpClientRequest) => send(request).pipe(Effect.flatMap(bodyOf((response) => response.text))),
    /** A deletion: what is already gone (404) counts as deleted. */
    remove: (request: HttpClientRequest.HttpClientRequest) =>
      send(request).pipe(
        Effect.asVoid,
        Effect.catchIf(gone, () => Effect.void)
      )
  }
})

export type BatchHttp = Effect.Success<typeof make>

/** A JSON request with the credential headers. */
export const jsonRequest = (
  method: "POST" | "PATCH",
  url: string,
  headers: Readonly<Record<string, string>>,
  body: unknown
) =>
  HttpClientRequest.make(method)(url).pipe(
    HttpClientRequest.setHeaders(headers),
    HttpClientRequest.acceptJson,
    HttpClientRequest.bodyText(JSON.stringify(body), "application/json")
  )

/** A JSONL file uploaded as the multipart form a Files API takes (`file`, `purpose=batch`). */
export const fileUpload = (url: string, headers: Readonly<Record<string, string>>, filename: string, jsonl: string) => {
  const form = new FormData()
  form.append("purpose", "batch")
  form.append("file", new Blob([jsonl], { type: "application/jsonl" }), filename)
  return HttpClientRequest.post(url).pipe(
    HttpClientRequest.setHeaders(headers),
    HttpClientRequest.acceptJson,
    HttpClientRequest.bodyFormData(form)
  )
}
