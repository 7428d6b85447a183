/**
 * The `POST /rerank` body: a query and the documents to score against it.
 *
 * **Details**
 *
 * - `documents` is an array of strings or of `{ "text"?, "image"? }` objects with at least one of
 *   the two (at least one document, at most {@link maxDocuments}); the forms may be mixed. An
 *   `image` (a URL or base64 data) is routed only to endpoints whose `input_modalities` list
 *   `image`.
 * - `top_n` keeps the best `n` results (all when absent); each result carries its document as it
 *   was sent unless `return_documents` is `false`.
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

const DocumentObject = Schema.Struct({
  text: Schema.optionalKey(Schema.String),
  image: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1)))
}).check(Schema.makeFilter(
  (d) => d.text !== undefined || d.image !== undefined ? undefined : "a document object needs text, image or both",
  { expected: "a document with text or image" }
))

/**
 * One document: its text, or `{ "text"?, "image"? }` with at least one of the two.
 *
 * @since 0.4.0
 */
const RerankDocument = Schema.Union([Schema.String, DocumentObject])

const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

/**
 * The provider parameters a rerank request can send.
 *
 * @since 0.4.0
 */
const providerParameters = ["max_tokens_per_doc"] as const

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
 * One document as the gateway handles it: its text, its image, or both.
 *
 * @since 0.4.0
 */
export interface Document {
  readonly text?: string
  readonly image?: string
}

/**
 * The documents in request order, a string as its `{ text }`.
 *
 * @since 0.4.0
 */
export const documents = (request: Pick<RerankRequest, "documents">): ReadonlyArray<Document> =>
  request.documents.map((d) => (typeof d === "string" ? { text: d } : d))

/**
 * The kinds of input a request carries: text (the query, at least), and image when a document
 * has one; routing sends it only to endpoints that take them all.
 *
 * @since 0.4.0
 */
export const inputModalities = (request: Pick<RerankRequest, "documents">): ReadonlyArray<"text" | "image"> =>
  request.documents.some((d) => typeof d !== "string" && d.image !== undefined) ? ["text", "image"] : ["text"]

/**
 * The tokens an image counts for in the gateway's estimates and worst-case bounds: above the 768
 * image tokens Jina's multimodal reranker cuts a page to, with room for its markers. What a
 * provider reports is what is billed.
 *
 * @since 0.4.0
 */
export const imageTokens = 1024

/**
 * The provider parameters the request sends.
 *
 * @since 0.4.0
 */
export const sentParameters = (request: RerankRequest): ReadonlyArray<string> =>
  providerParameters.filter((key) => request[key] !== undefined)
