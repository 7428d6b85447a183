import type { EmbeddingProvider } from "@switchyard/core"
import * as UpstreamAnswer from "@switchyard/core/upstream/UpstreamAnswer"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Clock, Effect, Layer, Redacted, Schema } from "effect"
import { HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"

export interface PostOptions {
  readonly connection: EmbeddingProvider.Connection
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}

const maxBodyChars = 8192

type Dispatcher = NodeHttpClient.Dispatcher["Service"]

/**
 * undici's `Agent`, made on the first upstream call rather than at start: undici is a large
 * package (about 5 MB of heap once loaded) that a gateway which has not yet forwarded a request
 * does not need. Until then its two entry points load it and hand the call over; afterwards they
 * are the agent's own methods, so a call costs what it did. Destroyed with the layer.
 */
const firstUseDispatcher = Effect.gen(function*() {
  let agent: Dispatcher | undefined
  let loading: Promise<Dispatcher> | undefined
  const load = () =>
    loading ??= import("undici").then(({ Agent }) => {
      const made = new Agent()
      agent = made
      lazy.request = made.request.bind(made) as Dispatcher["request"]
      lazy.dispatch = made.dispatch.bind(made)
      return made
    })
  const lazy = {
    request: ((options: Parameters<Dispatcher["request"]>[0]) => load().then((made) => made.request(options))) as Dispatcher["request"],
    dispatch: (options: Parameters<Dispatcher["dispatch"]>[0], handler: Parameters<Dispatcher["dispatch"]>[1]) => {
      void load().then((made) => made.dispatch(options, handler), (error: unknown) => handler.onResponseError?.(null as never, error as Error))
      return true
    }
  }
  yield* Effect.addFinalizer(() => agent === undefined ? Effect.void : Effect.promise(() => agent!.destroy()))
  // makeUndici calls only `request` (and `dispatch` for an upgrade).
  return lazy as unknown as Dispatcher
})

/**
 * The HTTP client of every upstream call (and of broadcast deliveries): undici over one
 * dispatcher. Built without `NodeHttpClient.layerUndici`'s merged context, which copies every
 * service of the layer's context into each response's context (a new Map of all of them per
 * call): the client takes its dispatcher when made and needs nothing else.
 */
export const clientLayer: Layer.Layer<HttpClient.HttpClient> = Layer.effect(HttpClient.HttpClient, NodeHttpClient.makeUndici).pipe(
  Layer.provide(Layer.effect(NodeHttpClient.Dispatcher, firstUseDispatcher))
)

/**
 * The headers that carry upstream credentials, never written into a trace (the tracing layer
 * provides the list once, for every client span).
 */
export const redactedHeaders = ["authorization", "cookie", "set-cookie", "x-api-key", "x-goog-api-key", "x-amz-security-token"]

// A provider's base URL and an API path make a handful of URLs: each is joined once.
const joined = new Map<string, Map<string, string>>()

export const joinUrl = (baseUrl: string, path: string): string => {
  let paths = joined.get(baseUrl)
  if (paths === undefined) {
    paths = new Map()
    joined.set(baseUrl, paths)
  }
  let url = paths.get(path)
  if (url === undefined) {
    url = baseUrl.replace(/\/+$/u, "") + path
    paths.set(path, url)
  }
  return url
}

/** `Authorization: Bearer <token>`: how every bearer credential (a key, a cloud identity's token) goes upstream. */
export const bearer = (token: string): Readonly<Record<string, string>> => ({ authorization: `Bearer ${token}` })

/** A connection's API key as a bearer, nothing when it has none. */
export const bearerOf = (connection: Pick<EmbeddingProvider.Connection, "apiKey">): Readonly<Record<string, string>> =>
  connection.apiKey === undefined ? {} : bearer(Redacted.value(connection.apiKey))

/**
 * A GET of one of a self-hosted server's own routes (health, model listing): the connection's key
 * as a bearer, as the servers' other routes take it (TEI's `--api-key`, a proxy in front of
 * Ollama), and its headers.
 */
export const serverGet = (connection: Pick<EmbeddingProvider.Connection, "baseUrl" | "apiKey" | "headers">, path: string) =>
  HttpClientRequest.get(joinUrl(connection.baseUrl, path)).pipe(
    HttpClientRequest.acceptJson,
    HttpClientRequest.setHeaders({ ...bearerOf(connection), ...connection.headers })
  )

/**
 * How a wire format reads a provider's refusal (a non-2xx answer, its body cut to 8 KiB) as an
 * `UpstreamError`: `UpstreamAnswer.fromResponse` unless the provider words its errors its own way
 * (Bedrock's `BedrockAnswer.fromResponse`).
 */
export type Refusal = (response: UpstreamAnswer.UpstreamResponse, now: number) => UpstreamError.UpstreamError

/** A non-2xx answer as the provider's failure: its body read (or empty), cut to 8 KiB and mapped. */
const refusalOf = (response: HttpClientResponse.HttpClientResponse, read: Refusal) =>
  Effect.gen(function*() {
    const text = yield* Effect.orElseSucceed(response.text, () => "")
    return yield* Effect.fail(read({
      status: response.status,
      headers: response.headers,
      body: text.length > maxBodyChars ? text.slice(0, maxBodyChars) : text
    }, yield* Clock.currentTimeMillis))
  })

/**
 * The one upstream call step of every wire format, the live calls' and the batch APIs': send the
 * request, classify what came back (a 2xx answer is the caller's to read; a failure to connect is
 * `Unreachable` or `ConnectionLost`), and map a refusal with its body cut to 8 KiB.
 */
export const send = (
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  read: Refusal = UpstreamAnswer.fromResponse
): Effect.Effect<HttpClientResponse.HttpClientResponse, UpstreamError.UpstreamError> =>
  client.execute(request).pipe(
    Effect.catchTag("HttpClientError", (error) => Effect.fail(fromHttpClientError(error))),
    Effect.flatMap((response) => response.status >= 200 && response.status < 300 ? Effect.succeed(response) : refusalOf(response, read))
  )

/** A 2xx answer's bytes; a body cut off while read is a lost connection, as a failed send's. */
export const bytesOf = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<Uint8Array, UpstreamError.UpstreamError> =>
  response.arrayBuffer.pipe(Effect.map((buffer) => new Uint8Array(buffer)), Effect.mapError(fromHttpClientError))

// Sends one JSON POST and returns the raw 2xx body (the attempt around it keeps the time limit).
export const postBytes = (client: HttpClient.HttpClient, options: PostOptions): Effect.Effect<Uint8Array, UpstreamError.UpstreamError> => {
  const { connection } = options
  const request = HttpClientRequest.post(joinUrl(connection.baseUrl, options.path)).pipe(
    HttpClientRequest.setHeaders({ ...options.headers, ...connection.headers }),
    HttpClientRequest.acceptJson,
    HttpClientRequest.bodyText(JSON.stringify(options.body), "application/json")
  )
  return Effect.flatMap(send(client, request), bytesOf)
}

const utf8 = new TextDecoder()

// A 2xx body read as JSON, the way every adapter reads it.
export const parseJson = (body: Uint8Array): Effect.Effect<unknown, UpstreamError.UpstreamError> => {
  try {
    return Effect.succeed(JSON.parse(utf8.decode(body)))
  } catch {
    return Effect.fail(UpstreamError.invalidResponse("the response body is not JSON"))
  }
}

// Sends one JSON POST and returns the parsed 2xx body.
export const post = (client: HttpClient.HttpClient, options: PostOptions) =>
  postBytes(client, options).pipe(Effect.flatMap(parseJson))

// biome-ignore lint/suspicious/noExplicitAny: any wire schema; the decoded type flows from `S`
export const decode = <S extends Schema.Codec<any, any, never, never>>(schema: S) => {
  const decodeBody = Schema.decodeUnknownEffect(schema)
  return (body: unknown): Effect.Effect<S["Type"], UpstreamError.UpstreamError> =>
    decodeBody(body).pipe(Effect.mapError((error) => UpstreamError.invalidResponse(error.message.slice(0, 2000))))
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

const fromHttpClientError = (error: HttpClientError.HttpClientError): UpstreamError.UpstreamError => {
  const reason = error.reason
  switch (reason._tag) {
    case "InvalidUrlError":
      return UpstreamError.unreachable("the provider's base URL is not a valid URL")
    case "EncodeError":
      return UpstreamError.unreachable("the request body could not be encoded")
    case "TransportError": {
      const described = describe(reason.cause)
      const detail = detailOf(described, reason.description ?? "transport error")
      return described.codes.some((code) => unreachableCodes.has(code))
        ? UpstreamError.unreachable(detail)
        : UpstreamError.connectionLost(detail)
    }
    case "DecodeError":
    case "EmptyBodyError":
      return UpstreamError.connectionLost(
        detailOf(describe(reason.cause), reason.description ?? "the response body could not be read")
      )
    case "StatusCodeError":
      return UpstreamAnswer.fromResponse({ status: reason.response.status, headers: {}, body: "" }, 0)
  }
}
