/**
 * The `POST /rerank` body: a query and the documents to score against it.
 *
 * **Details**
 *
 * - `documents` is an array of strings or of `{ "text": string }` objects (at least one, at
 *   most {@link maxDocuments}); the two forms may be mixed.
 * - `top_n` keeps the best `n` results (all when absent); `return_documents` echoes each
 *   result's document text.
 * - `max_tokens_per_doc` is a provider parameter: sent to endpoints that list it in
 *   `supported_parameters`, the way embeddings parameters are.
 * - `provider` is the same preferences object as embeddings; `session_id`, `trace` and `user` are
 *   accepted as on embeddings (OpenRouter's SDK sends them).
 *
 * @since 0.4.0
 */
import { Schema } from "effect"
import { RequestModel } from "./EmbeddingRequest.ts"
import { ProviderPreferences } from "./ProviderPreferences.ts"
import { TraceConfig } from "./TraceConfig.ts"

/**
 * The most documents one request may carry.
 *
 * @since 0.4.0
 */
export const maxDocuments = 10_000

/**
 * One document: its text, or `{ "text": ... }`.
 *
 * @since 0.4.0
 */
export const RerankDocument = Schema.Union([Schema.String, Schema.Struct({ text: Schema.String })])

/**
 * @since 0.4.0
 */
export type RerankDocument = typeof RerankDocument.Type

const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

/**
 * The provider parameters a rerank request can send.
 *
 * @since 0.4.0
 */
export const providerParameters = ["max_tokens_per_doc"] as const

/**
 * @since 0.4.0
 */
export const RerankRequest = Schema.Struct({
  model: RequestModel,
  query: Schema.String.check(Schema.isMinLength(1)),
  documents: Schema.Array(RerankDocument).check(Schema.isMinLength(1), Schema.isMaxLength(maxDocuments)),
  top_n: Schema.optionalKey(PositiveInt),
  return_documents: Schema.optionalKey(Schema.Boolean),
  max_tokens_per_doc: Schema.optionalKey(PositiveInt),
  provider: Schema.optionalKey(Schema.NullOr(ProviderPreferences)),
  session_id: Schema.optionalKey(Schema.String.check(Schema.isMaxCodePoints(256))),
  trace: Schema.optionalKey(TraceConfig),
  user: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "RerankRequest" })

/**
 * @since 0.4.0
 */
export type RerankRequest = typeof RerankRequest.Type

/**
 * The documents' texts, in request order.
 *
 * @since 0.4.0
 */
export const texts = (request: Pick<RerankRequest, "documents">): ReadonlyArray<string> =>
  request.documents.map((d) => (typeof d === "string" ? d : d.text))

/**
 * The provider parameters the request sends.
 *
 * @since 0.4.0
 */
export const sentParameters = (request: RerankRequest): ReadonlyArray<string> =>
  providerParameters.filter((key) => request[key] !== undefined)
