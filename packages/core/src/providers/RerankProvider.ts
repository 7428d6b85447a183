/**
 * The rerank capability of an upstream provider: the port the Cohere, Voyage and Jina wire
 * formats and the in-process local model implement.
 *
 * **Details**
 *
 * The gateway turns a client's request into one {@link UpstreamRerank} per upstream call (a
 * request larger than an endpoint's `max_documents` is split, and the results merged by index)
 * and hands it, with the provider's `Connection`, to the adapter. The adapter returns one score
 * per document it was sent, with the billing counts its provider reported. Failures are
 * `UpstreamError`s, as for embeddings.
 *
 * This module holds types only: it performs no I/O.
 *
 * @since 0.4.0
 */
import type { Effect } from "effect"
import type { UpstreamError } from "../upstream/UpstreamError.ts"
import type { Document } from "../schema/RerankRequest.ts"
import type { Connection } from "./EmbeddingProvider.ts"

/**
 * One upstream rerank call: the provider's model name, the query, the documents (text, image or
 * both; an adapter whose API takes text only refuses an image rather than drop it), and
 * `maxTokensPerDoc` when the client sent it and the endpoint takes it.
 *
 * @since 0.4.0
 */
export interface UpstreamRerank {
  readonly upstreamModel: string
  readonly query: string
  readonly documents: ReadonlyArray<Document>
  readonly maxTokensPerDoc?: number
}

/**
 * One document's score; `index` is its position in the call's `documents`.
 *
 * @since 0.4.0
 */
export interface Score {
  readonly index: number
  readonly relevance_score: number
}

/**
 * A validated answer: a score for every document sent, and what the provider billed
 * (`searchUnits` for Cohere, `totalTokens` for Voyage and Jina; undefined when it reported none).
 *
 * @since 0.4.0
 */
export interface RerankResult {
  readonly scores: ReadonlyArray<Score>
  readonly searchUnits: number | undefined
  readonly totalTokens: number | undefined
  readonly upstreamId?: string | undefined
}

/**
 * The rerank capability of one wire format.
 *
 * @since 0.4.0
 */
export interface RerankProvider {
  readonly rerank: (connection: Connection, request: UpstreamRerank) => Effect.Effect<RerankResult, UpstreamError>
}
