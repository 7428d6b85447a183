import { EmbeddingProvider } from "@switchyard/core"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect, type Schema } from "effect"
import { HttpClient } from "effect/http"
import * as CloudIdentity from "./CloudIdentity.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as Span from "../instrumentation/Span.ts"

/**
 * The headers that carry a provider's API key.
 */
export type KeyHeaders = (apiKey: string) => Readonly<Record<string, string>>

/** `Authorization: Bearer <key>`. */
export const bearer: KeyHeaders = UpstreamHttp.bearer

/** The bare key in a header of the provider's own (`x-goog-api-key`). */
export const keyIn = (name: string): KeyHeaders => (apiKey) => ({ [name]: apiKey })

/**
 * One request as it goes on the wire: the path after the connection's base URL, and the JSON body.
 */
interface Outgoing {
  readonly path: string
  readonly body: unknown
}

/**
 * What an answer says beyond its vectors. An undefined `modalityTokens` or `upstreamId` is left
 * out of the result.
 */
export interface Usage {
  readonly promptTokens: number
  readonly totalTokens: number
  readonly modalityTokens?: EmbeddingProvider.ModalityTokens | undefined
  readonly upstreamId?: string | undefined
  /** The counts are the gateway's estimate: the answer had none. */
  readonly tokensEstimated?: boolean | undefined
}

/**
 * Per-modality token counts while an adapter adds them up.
 */
export type ModalityCounts = { -readonly [K in keyof EmbeddingProvider.ModalityTokens]: number }

/**
 * What sets one provider's embeddings API apart: how the key is sent, how a request is written,
 * how an error body and an answer are read. Everything else (the POST within the time limit,
 * decoding, vector validation and re-encoding, the result) is the same for every wire format and
 * lives in {@link make}.
 */
export interface WireFormat<Response> {
  /** The provider's name, for the call's span (`Cohere.embed`). */
  readonly name: string
  readonly keyHeaders: KeyHeaders
  // biome-ignore lint/suspicious/noExplicitAny: the wire format's encoded side is its own
  readonly response: Schema.Codec<Response, any, never, never>
  readonly request: (
    request: EmbeddingProvider.UpstreamRequest,
    connection: EmbeddingProvider.Connection
  ) => Effect.Effect<Outgoing, UpstreamError.UpstreamError>
  /** The answer's vectors with their input positions, in whatever encoding the provider sent. */
  readonly vectors: (
    response: Response,
    request: EmbeddingProvider.UpstreamRequest
  ) => Effect.Effect<ReadonlyArray<VectorEncoding.RawVector>, UpstreamError.UpstreamError>
  readonly usage: (response: Response, request: EmbeddingProvider.UpstreamRequest) => Usage
}

/**
 * The input is valid but this provider cannot embed it; nothing is sent.
 */
export const unsupported = UpstreamError.unsupportedInput

/**
 * The provider answered 2xx with something that is not a usable answer.
 */
export const invalidResponse = UpstreamError.invalidResponse

/**
 * The adapter for one wire format: writes the request, posts it, decodes and validates the answer
 * and returns the vectors in the encoding the client asked for.
 */
export const make = <Response>(format: WireFormat<Response>) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const read = reader(format)
    const embed = Effect.fnUntraced(function*(
      connection: EmbeddingProvider.Connection,
      request: EmbeddingProvider.UpstreamRequest
    ) {
      const { path, body } = yield* format.request(request, connection)
      const json = yield* UpstreamHttp.post(client, {
        connection,
        path,
        headers: yield* CloudIdentity.credentialHeaders(connection, format.keyHeaders),
        body
      })
      return yield* read(request, json)
    }, Span.within(`${format.name}.embed`))
    return EmbeddingProvider.EmbeddingProvider.of({ embed })
  })

/**
 * How a wire format reads an answer already parsed as JSON (a live call's body, or a provider
 * batch's result line's): decoded, its vectors checked and encoded as asked, its usage read.
 */
export const reader = <Response>(format: WireFormat<Response>) => {
  const decodeResponse = UpstreamHttp.decode(format.response)
  return Effect.fnUntraced(function*(request: EmbeddingProvider.UpstreamRequest, json: unknown) {
    const response: Response = yield* decodeResponse(json)
    const embeddings = yield* VectorEncoding.finish(request, yield* format.vectors(response, request))
    const { modalityTokens, promptTokens, totalTokens, upstreamId, tokensEstimated } = format.usage(response, request)
    return {
      embeddings,
      promptTokens,
      totalTokens,
      ...(modalityTokens !== undefined ? { modalityTokens } : {}),
      ...(upstreamId !== undefined ? { upstreamId } : {}),
      ...(tokensEstimated === true ? { tokensEstimated } : {})
    } satisfies EmbeddingProvider.EmbeddingResult
  })
}
