import type { EmbeddingProvider } from "@switchyard/core"
import type * as RerankProvider from "@switchyard/core/providers/RerankProvider"
import type * as RerankRequest from "@switchyard/core/schema/RerankRequest"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect, Schema } from "effect"
import { HttpClient } from "effect/http"
import * as CloudIdentity from "./CloudIdentity.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"
import type { KeyHeaders } from "./WireFormat.ts"
import * as Span from "../instrumentation/Span.ts"

/**
 * What the provider billed for one call; undefined where it reported nothing.
 */
interface Billed {
  readonly searchUnits?: number | undefined
  readonly totalTokens?: number | undefined
  readonly upstreamId?: string | undefined
}

/**
 * What sets one provider's rerank API apart: the path, the body, where the scores and the billed
 * counts sit in the answer. Posting within the time limit, decoding and checking that every
 * document got exactly one finite score are the same for all and live in {@link make}.
 */
export interface RerankFormat<Response> {
  /** The provider's name, for the call's span (`Cohere.rerank`). */
  readonly name: string
  readonly keyHeaders: KeyHeaders
  /** The path after the base URL, or how a connection places it (Vertex's project). */
  readonly path: string | ((connection: EmbeddingProvider.Connection) => string)
  /** Where the call goes when not to the connection's base URL (Vertex's Ranking API). */
  readonly baseUrl?: (connection: EmbeddingProvider.Connection) => string
  // biome-ignore lint/suspicious/noExplicitAny: the wire format's encoded side is its own
  readonly response: Schema.Codec<Response, any, never, never>
  /**
   * How a call's documents are written when one carries an image; absent, the API takes text
   * only and a call with an image is refused before it is sent. Text-only calls send strings.
   */
  readonly imageDocument?: (document: RerankRequest.Document) => unknown
  /** The body, given the documents as this wire writes them. */
  readonly body: (request: RerankProvider.UpstreamRerank, documents: ReadonlyArray<unknown>) => unknown
  readonly scores: (response: Response) => ReadonlyArray<RerankProvider.Score>
  readonly billed: (response: Response) => Billed
}

/** A score as providers write it: `index` and `relevance_score`, anything else ignored. */
export const WireScore = Schema.Struct({ index: Schema.Int, relevance_score: Schema.Finite })

// A count a provider reported, when it is a whole non-negative number.
const billedCount = (n: number | undefined): number | undefined =>
  typeof n === "number" && Number.isSafeInteger(n) && n >= 0 ? n : undefined

// Every document sent has exactly one score: a provider that drops, repeats or invents an index
// has not answered the request.
export const checkScores = (
  scores: ReadonlyArray<RerankProvider.Score>,
  documents: number
): Effect.Effect<ReadonlyArray<RerankProvider.Score>, UpstreamError.UpstreamError> => {
  const seen = new Set<number>()
  for (const s of scores) {
    if (!Number.isInteger(s.index) || s.index < 0 || s.index >= documents) {
      return Effect.fail(UpstreamError.invalidResponse(`result index ${s.index} is not one of the ${documents} documents sent`))
    }
    if (seen.has(s.index)) return Effect.fail(UpstreamError.invalidResponse(`document ${s.index} was scored twice`))
    seen.add(s.index)
  }
  if (seen.size !== documents) {
    return Effect.fail(UpstreamError.invalidResponse(`${documents} documents were sent and ${seen.size} scored`))
  }
  return Effect.succeed(scores)
}

// The documents as the wire writes them: strings while none has an image; then objects, where
// the wire takes images, and a refusal where it does not (an image is never dropped).
const wireDocuments = (
  format: Pick<RerankFormat<unknown>, "name" | "imageDocument">,
  documents: ReadonlyArray<RerankRequest.Document>
): Effect.Effect<ReadonlyArray<unknown>, UpstreamError.UpstreamError> => {
  const withImage = documents.findIndex((d) => d.image !== undefined)
  if (withImage === -1) return Effect.succeed(documents.map((d) => d.text ?? ""))
  return format.imageDocument === undefined
    ? Effect.fail(UpstreamError.unsupportedInput(`document ${withImage} has an image; ${format.name}'s rerank API takes text documents only`))
    : Effect.succeed(documents.map(format.imageDocument))
}

/**
 * The rerank adapter for one wire format.
 */
export const make = <Response>(format: RerankFormat<Response>) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const decodeResponse = UpstreamHttp.decode(format.response)
    const rerank = Effect.fnUntraced(function*(
      connection: EmbeddingProvider.Connection,
      request: RerankProvider.UpstreamRerank
    ) {
      const documents = yield* wireDocuments(format, request.documents)
      const json = yield* UpstreamHttp.post(client, {
        connection: format.baseUrl === undefined ? connection : { ...connection, baseUrl: format.baseUrl(connection) },
        path: typeof format.path === "string" ? format.path : format.path(connection),
        headers: yield* CloudIdentity.credentialHeaders(connection, format.keyHeaders),
        body: format.body(request, documents)
      })
      const response = yield* decodeResponse(json)
      const scores = yield* checkScores(format.scores(response), request.documents.length)
      const { searchUnits, totalTokens, upstreamId } = format.billed(response)
      return {
        scores,
        searchUnits: billedCount(searchUnits),
        totalTokens: billedCount(totalTokens),
        ...(upstreamId !== undefined ? { upstreamId } : {})
      } satisfies RerankProvider.RerankResult
    }, Span.within(`${format.name}.rerank`))
    return { rerank } satisfies RerankProvider.RerankProvider
  })
