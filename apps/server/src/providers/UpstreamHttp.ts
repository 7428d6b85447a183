import { EmbeddingProvider } from "@switchyard/core"
import { Clock, Duration, Effect, Schema } from "effect"
import { Headers, HttpClient, type HttpClientError, HttpClientRequest } from "effect/http"
import type * as ErrorBody from "./ErrorBody.ts"

export interface PostOptions {
  readonly adapter: string
  readonly connection: EmbeddingProvider.Connection
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
  readonly parseError: ErrorBody.Parser
}

const maxBodyChars = 8192

const redactedHeaders = ["authorization", "cookie", "set-cookie", "x-api-key", "x-goog-api-key"]

export const joinUrl = (baseUrl: string, path: string): string => baseUrl.replace(/\/+$/u, "") + path

const fail = (adapter: string, reason: EmbeddingProvider.UpstreamErrorReason) =>
  new EmbeddingProvider.UpstreamError({ adapter, reason })

// Sends one JSON POST within the connection's time limit and returns the raw 2xx body.
export const postBytes = Effect.fnUntraced(function*(client: HttpClient.HttpClient, options: PostOptions) {
  const { adapter, connection } = options
  const request = HttpClientRequest.post(joinUrl(connection.baseUrl, options.path)).pipe(
    HttpClientRequest.setHeaders({ ...options.headers, ...connection.headers }),
    HttpClientRequest.acceptJson,
    HttpClientRequest.bodyText(JSON.stringify(options.body), "application/json")
  )
  const attempt = Effect.gen(function*() {
    const response = yield* client.execute(request)
    if (response.status >= 200 && response.status < 300) return new Uint8Array(yield* response.arrayBuffer)
    const text = yield* Effect.orElseSucceed(response.text, () => "")
    const details = options.parseError(text)
    const retryAfterMs = retryAfter(response.headers, yield* Clock.currentTimeMillis) ?? details.retryAfterMs
    return yield* fail(
      adapter,
      EmbeddingProvider.HttpStatus.make({
        status: response.status,
        body: text.length > maxBodyChars ? text.slice(0, maxBodyChars) : text,
        ...(details.message !== undefined ? { message: details.message } : {}),
        ...(details.code !== undefined ? { code: details.code } : {}),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {})
      })
    )
  }).pipe(Effect.catchTag("HttpClientError", (error) => Effect.fail(fromHttpClientError(adapter, error))))
  return yield* attempt.pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(connection.timeoutMs),
      orElse: () => Effect.fail(fail(adapter, EmbeddingProvider.Timeout.make({ timeoutMs: connection.timeoutMs })))
    }),
    Effect.provideService(Headers.CurrentRedactedNames, redactedHeaders)
  )
})

const utf8 = new TextDecoder()

// A 2xx body read as JSON, the way every adapter reads it.
export const parseJson = (adapter: string, body: Uint8Array): Effect.Effect<unknown, EmbeddingProvider.UpstreamError> => {
  try {
    return Effect.succeed(JSON.parse(utf8.decode(body)))
  } catch {
    return Effect.fail(fail(adapter, EmbeddingProvider.InvalidResponse.make({ detail: "the response body is not JSON" })))
  }
}

// Sends one JSON POST within the connection's time limit and returns the parsed 2xx body.
export const post = (client: HttpClient.HttpClient, options: PostOptions) =>
  postBytes(client, options).pipe(Effect.flatMap((body) => parseJson(options.adapter, body)))

export const decode = <S extends Schema.Codec<any, any, never, never>>(adapter: string, schema: S) => {
  const decodeBody = Schema.decodeUnknownEffect(schema)
  return (body: unknown): Effect.Effect<S["Type"], EmbeddingProvider.UpstreamError> =>
    decodeBody(body).pipe(
      Effect.mapError((error) =>
        fail(adapter, EmbeddingProvider.InvalidResponse.make({ detail: error.message.slice(0, 2000) }))
      )
    )
}

export const retryAfter = (headers: Headers.Headers, now: number): number | undefined => {
  const ms = headers["retry-after-ms"]
  if (ms !== undefined && Number.isFinite(Number(ms)) && ms.trim() !== "") return Math.max(0, Number(ms))
  const value = headers["retry-after"]?.trim()
  if (value === undefined || value === "") return undefined
  if (/^\d+(\.\d+)?$/u.test(value)) return Math.round(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const unreachableCodes = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "ERR_TLS_CERT_ALTNAME_INVALID"
])

interface Described {
  readonly codes: ReadonlyArray<string>
  readonly message: string | undefined
}

const describe = (cause: unknown): Described => {
  const codes: Array<string> = []
  let message: string | undefined
  const seen = new Set<unknown>()
  const visit = (value: unknown) => {
    if (typeof value !== "object" || value === null || seen.has(value)) return
    seen.add(value)
    const record = value as { readonly code?: unknown; readonly message?: unknown; readonly cause?: unknown; readonly errors?: unknown }
    if (typeof record.code === "string") codes.push(record.code)
    if (typeof record.message === "string" && record.message !== "") message = record.message
    visit(record.cause)
    if (Array.isArray(record.errors)) record.errors.forEach(visit)
  }
  visit(cause)
  return { codes, message }
}

const detailOf = (described: Described, fallback: string): string => {
  const code = described.codes[described.codes.length - 1]
  const message = described.message ?? fallback
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message
}

export const fromHttpClientError = (
  adapter: string,
  error: HttpClientError.HttpClientError
): EmbeddingProvider.UpstreamError => {
  const reason = error.reason
  switch (reason._tag) {
    case "InvalidUrlError":
      return fail(adapter, EmbeddingProvider.Unreachable.make({ detail: "the provider's base URL is not a valid URL" }))
    case "EncodeError":
      return fail(adapter, EmbeddingProvider.Unreachable.make({ detail: "the request body could not be encoded" }))
    case "TransportError": {
      const described = describe(reason.cause)
      const detail = detailOf(described, reason.description ?? "transport error")
      return described.codes.some((code) => unreachableCodes.has(code))
        ? fail(adapter, EmbeddingProvider.Unreachable.make({ detail }))
        : fail(adapter, EmbeddingProvider.ConnectionReset.make({ detail }))
    }
    case "DecodeError":
    case "EmptyBodyError":
      return fail(
        adapter,
        EmbeddingProvider.ConnectionReset.make({
          detail: detailOf(describe(reason.cause), reason.description ?? "the response body could not be read")
        })
      )
    case "StatusCodeError":
      return fail(
        adapter,
        EmbeddingProvider.HttpStatus.make({ status: reason.response.status, body: "" })
      )
  }
}
