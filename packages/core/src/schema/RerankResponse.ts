/**
 * The `POST /rerank` answer: the documents' scores, best first.
 *
 * @since 0.4.0
 */
import { Schema } from "effect"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * One scored document: `index` into the request's `documents`, its `relevance_score` (higher is
 * more relevant), and `document`, the document as it was sent (`{ text }`, `{ image }` or both),
 * as OpenRouter answers; an empty object when the request sent `return_documents: false` (the
 * field stays, as OpenRouter's schema requires it).
 *
 * @since 0.4.0
 */
const RerankResult = Schema.Struct({
  index: Count,
  relevance_score: Schema.Finite,
  document: Schema.Struct({ text: Schema.optionalKey(Schema.String), image: Schema.optionalKey(Schema.String) })
}).annotate({ identifier: "RerankResult" })

/**
 * What the request consumed and cost: the search units and tokens the provider billed (or the
 * gateway's estimate when it reported none), the cost in credits (USD), and whether the
 * workspace's own provider key paid.
 *
 * @since 0.4.0
 */
const RerankUsage = Schema.Struct({
  search_units: Count,
  total_tokens: Count,
  cost: Schema.Finite,
  is_byok: Schema.Boolean
}).annotate({ identifier: "RerankUsage" })

/**
 * @since 0.4.0
 */
export const RerankResponse = Schema.Struct({
  id: Schema.String,
  model: Schema.String,
  provider: Schema.String,
  results: Schema.Array(RerankResult),
  usage: RerankUsage
}).annotate({ identifier: "RerankResponse" })

/**
 * @since 0.4.0
 */
export type RerankResponse = typeof RerankResponse.Type
