/**
 * Cohere's embed, as the `cohere-ai` SDK speaks it (`CohereClientV2.embed` at `POST /api/v2/embed`,
 * `CohereClient.embed` at `POST /api/v1/embed`, under the base URL `http://host:8080/api`), served
 * from any routed provider.
 *
 * **Details**
 *
 * - The request is Cohere's: `model` (the vendor may be left out), one of `texts`, `images`
 *   (data URLs) or `inputs` (v2: `{ content: [{ type: "text" | "image_url", … }] }`),
 *   `input_type`, `embedding_types` (several at once), `output_dimension` (v2), `truncate`
 *   (`NONE`, `START`, `END`; `END` when absent, as Cohere's), and `max_tokens` and `priority`
 *   (accepted, not used).
 * - The answer is Cohere's: `id` (the generation id), `embeddings` with one list per type asked
 *   (`float`, `int8`, `uint8`, `binary`, `ubinary`, `base64`: base64 of little-endian float32),
 *   `texts`, `meta` with the billed input tokens; `response_type` `embeddings_by_type`, or for v1
 *   without `embedding_types` `embeddings_floats` with the float lists as `embeddings`.
 *
 * @since 0.12.0
 */
import { Schema } from "effect"
import { RequestModel } from "./EmbeddingRequest.ts"

const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * The types Cohere's `embedding_types` names.
 *
 * @since 0.12.0
 */
export const CohereEmbeddingType = Schema.Literals(["float", "int8", "uint8", "binary", "ubinary", "base64"])

/**
 * @since 0.12.0
 */
export type CohereEmbeddingType = typeof CohereEmbeddingType.Type

const ContentPart = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String.check(Schema.isMinLength(1)) }),
  Schema.Struct({ type: Schema.Literal("image_url"), image_url: Schema.Struct({ url: Schema.String }) })
])

const common = {
  model: RequestModel,
  input_type: Schema.optionalKey(Schema.String),
  texts: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isMinLength(1))).check(Schema.isMinLength(1))),
  images: Schema.optionalKey(Schema.Array(Schema.String).check(Schema.isMinLength(1))),
  embedding_types: Schema.optionalKey(Schema.Array(CohereEmbeddingType).check(Schema.isMinLength(1))),
  truncate: Schema.optionalKey(Schema.Literals(["NONE", "START", "END"]))
}

/**
 * `POST /api/v2/embed`'s body.
 *
 * @since 0.12.0
 */
export const CohereEmbedV2Request = Schema.Struct({
  ...common,
  inputs: Schema.optionalKey(Schema.Array(Schema.Struct({ content: Schema.Array(ContentPart).check(Schema.isMinLength(1)) })).check(Schema.isMinLength(1))),
  output_dimension: Schema.optionalKey(PositiveInt),
  max_tokens: Schema.optionalKey(PositiveInt),
  priority: Schema.optionalKey(Schema.Int)
}).annotate({ identifier: "CohereEmbedV2Request" })

/**
 * @since 0.12.0
 */
export type CohereEmbedV2Request = typeof CohereEmbedV2Request.Type

/**
 * `POST /api/v1/embed`'s body.
 *
 * @since 0.12.0
 */
export const CohereEmbedV1Request = Schema.Struct(common).annotate({ identifier: "CohereEmbedV1Request" })

/**
 * @since 0.12.0
 */
export type CohereEmbedV1Request = typeof CohereEmbedV1Request.Type

const Numbers = Schema.Array(Schema.Array(Schema.Finite))

const Meta = Schema.Struct({
  api_version: Schema.Struct({ version: Schema.String }),
  billed_units: Schema.Struct({ input_tokens: Count })
})

/**
 * The answer with one list per type asked.
 *
 * @since 0.12.0
 */
export const CohereEmbedByType = Schema.Struct({
  id: Schema.String,
  response_type: Schema.Literal("embeddings_by_type"),
  embeddings: Schema.Struct({
    float: Schema.optionalKey(Numbers),
    int8: Schema.optionalKey(Numbers),
    uint8: Schema.optionalKey(Numbers),
    binary: Schema.optionalKey(Numbers),
    ubinary: Schema.optionalKey(Numbers),
    base64: Schema.optionalKey(Schema.Array(Schema.String))
  }),
  texts: Schema.optionalKey(Schema.Array(Schema.String)),
  meta: Meta
}).annotate({ identifier: "CohereEmbedByType" })

/**
 * @since 0.12.0
 */
export type CohereEmbedByType = typeof CohereEmbedByType.Type

/**
 * v1's answer when no `embedding_types` was given: the float lists as `embeddings`.
 *
 * @since 0.12.0
 */
export const CohereEmbedFloats = Schema.Struct({
  id: Schema.String,
  response_type: Schema.Literal("embeddings_floats"),
  embeddings: Numbers,
  texts: Schema.Array(Schema.String),
  meta: Meta
}).annotate({ identifier: "CohereEmbedFloats" })

/**
 * @since 0.12.0
 */
export type CohereEmbedFloats = typeof CohereEmbedFloats.Type
