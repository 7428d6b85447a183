/**
 * Cohere's v2 rerank, as the `cohere-ai` SDK's `CohereClientV2.rerank` speaks it, served at
 * `POST /api/v2/rerank` so that the SDK works with the base URL `http://host:8080/api` (its v1
 * client's `rerank` reaches `POST /api/v1/rerank` under the same base).
 *
 * **Details**
 *
 * - The request is Cohere's: `model` (the vendor may be left out, as everywhere), `query`,
 *   `documents` as strings, `top_n`, `max_tokens_per_doc`, and `priority` (Cohere's scheduling
 *   hint, accepted and not used: the gateway has no queue to order).
 * - The answer is Cohere's: `id`, `results` (`index`, `relevance_score`, best first, cut to
 *   `top_n`; no documents, as v2 returns none) and `meta` with the billed search units.
 *
 * @since 0.4.0
 */
import { Schema } from "effect"
import { RequestModel } from "./EmbeddingRequest.ts"
import { maxDocuments } from "./RerankRequest.ts"

const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * @since 0.4.0
 */
export const CohereRerankRequest = Schema.Struct({
  model: RequestModel,
  query: Schema.String.check(Schema.isMinLength(1)),
  documents: Schema.Array(Schema.String).check(Schema.isMinLength(1), Schema.isMaxLength(maxDocuments)),
  top_n: Schema.optionalKey(PositiveInt),
  max_tokens_per_doc: Schema.optionalKey(PositiveInt),
  priority: Schema.optionalKey(Schema.Int)
}).annotate({ identifier: "CohereRerankRequest" })

/**
 * @since 0.4.0
 */
export type CohereRerankRequest = typeof CohereRerankRequest.Type

/**
 * @since 0.4.0
 */
export const CohereRerankResponse = Schema.Struct({
  id: Schema.String,
  results: Schema.Array(Schema.Struct({ index: Count, relevance_score: Schema.Finite })),
  meta: Schema.Struct({
    api_version: Schema.Struct({ version: Schema.String }),
    billed_units: Schema.Struct({ search_units: Count })
  })
}).annotate({ identifier: "CohereRerankResponse" })

/**
 * @since 0.4.0
 */
export type CohereRerankResponse = typeof CohereRerankResponse.Type
