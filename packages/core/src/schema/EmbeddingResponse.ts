/**
 * The bodies of `POST /embeddings` (200) and `GET /embeddings/models`, in the shapes the
 * official OpenRouter SDK validates.
 *
 * **Details**
 *
 * Costs are credits (USD) as JSON numbers; compute them exactly with `Cost.compute` and convert
 * with `Cost.toUsage` at the edge. The model listing carries every field the SDK requires of a
 * model (`architecture`, `canonical_slug`, `context_length`, `created`, `default_parameters`,
 * `links`, `per_request_limits`, `pricing`, `supported_parameters`, `supported_voices`,
 * `top_provider`), plus `links.next` and `total_count` for paging.
 *
 * @since 0.1.0
 */
import { Schema, SchemaGetter } from "effect"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * One vector: floats, or a base64 string of little-endian float32 when `encoding_format` is
 * `base64`.
 *
 * @since 0.1.0
 */
const EmbeddingData = Schema.Struct({
  object: Schema.Literal("embedding"),
  embedding: Schema.Union([Schema.Array(Schema.Finite), Schema.String]),
  index: Schema.optionalKey(Count)
})

/**
 * Breakdown of upstream inference costs, in credits.
 *
 * @since 0.1.0
 */
const CostDetails = Schema.Struct({
  upstream_inference_prompt_cost: Schema.Finite,
  upstream_inference_completions_cost: Schema.Finite,
  upstream_inference_cost: Schema.optionalKey(Schema.NullOr(Schema.Finite)),
  server_tool_cost: Schema.optionalKey(Schema.NullOr(Schema.Finite))
})

/**
 * Per-modality token counts; only non-zero counts are present, and only when the input mixes
 * two or more modalities and the provider reported them.
 *
 * @since 0.1.0
 */
const PromptTokensDetails = Schema.Struct({
  audio_tokens: Schema.optionalKey(Count),
  file_tokens: Schema.optionalKey(Count),
  image_tokens: Schema.optionalKey(Count),
  text_tokens: Schema.optionalKey(Count),
  video_tokens: Schema.optionalKey(Count)
})

/**
 * Token usage and cost of one request.
 *
 * @since 0.1.0
 */
export const EmbeddingUsage = Schema.Struct({
  prompt_tokens: Count,
  total_tokens: Count,
  cost: Schema.optionalKey(Schema.Finite),
  cost_details: Schema.optionalKey(Schema.NullOr(CostDetails)),
  is_byok: Schema.optionalKey(Schema.Boolean),
  prompt_tokens_details: Schema.optionalKey(PromptTokensDetails),
  /**
   * Switchyard: present and `true` when the provider reported no token count and the gateway
   * estimated it from the input (a self-hosted server without a tokenize route).
   */
  tokens_estimated: Schema.optionalKey(Schema.Boolean)
})

/**
 * @since 0.1.0
 */
export type EmbeddingUsage = typeof EmbeddingUsage.Type

/**
 * What the embeddings cache served, present when it served any item: `items` came from the cache,
 * `tokens` is what they were billed for when they were embedded (counted in `usage.prompt_tokens`,
 * not charged again).
 *
 * @since 0.2.0
 */
const CacheReport = Schema.Struct({
  status: Schema.Literals(["hit", "partial"]),
  items: Count,
  tokens: Count
}).annotate({ identifier: "CacheReport" })

/**
 * The `POST /embeddings` success body: one vector per input, in input order. `switchyard` carries
 * the gateway's own additions (the cache's report; the route when `x-switchyard-explain` asks).
 *
 * @since 0.1.0
 */
export const EmbeddingResponse = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(EmbeddingData),
  model: Schema.String,
  id: Schema.optionalKey(Schema.String),
  usage: Schema.optionalKey(EmbeddingUsage),
  switchyard: Schema.optionalKey(Schema.Struct({ cache: Schema.optionalKey(CacheReport) }))
}).annotate({ identifier: "EmbeddingResponse" })

/**
 * @since 0.1.0
 */
export type EmbeddingResponse = typeof EmbeddingResponse.Type

/**
 * The list price of a model, decimal USD strings: `prompt` and `completion` per token as
 * OpenRouter publishes them (not per million), `request` per request, `image` per image,
 * `audio` per audio unit, `search` per search unit (rerank models billed by search).
 *
 * @since 0.1.0
 */
const ModelPricing = Schema.Struct({
  prompt: Schema.String,
  completion: Schema.String,
  request: Schema.optionalKey(Schema.String),
  image: Schema.optionalKey(Schema.String),
  audio: Schema.optionalKey(Schema.String),
  search: Schema.optionalKey(Schema.String)
})

/**
 * One embedding model in the listing.
 *
 * @since 0.1.0
 */
export const EmbeddingModel = Schema.Struct({
  id: Schema.String,
  canonical_slug: Schema.String,
  name: Schema.String,
  created: Schema.Int,
  description: Schema.optionalKey(Schema.String),
  context_length: Schema.NullOr(Schema.Int),
  hugging_face_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  architecture: Schema.Struct({
    modality: Schema.NullOr(Schema.String),
    input_modalities: Schema.Array(Schema.String),
    output_modalities: Schema.Array(Schema.String),
    tokenizer: Schema.optionalKey(Schema.String)
  }),
  pricing: ModelPricing,
  top_provider: Schema.Struct({
    context_length: Schema.optionalKey(Schema.NullOr(Schema.Int)),
    max_completion_tokens: Schema.optionalKey(Schema.NullOr(Schema.Int)),
    is_moderated: Schema.Boolean
  }),
  per_request_limits: Schema.NullOr(Schema.Struct({ prompt_tokens: Schema.Finite, completion_tokens: Schema.Finite })),
  supported_parameters: Schema.Array(Schema.String),
  supported_voices: Schema.NullOr(Schema.Array(Schema.String)),
  default_parameters: Schema.NullOr(Schema.Record(Schema.String, Schema.Json)),
  links: Schema.Struct({ details: Schema.String }),
  /** Switchyard, embeddings models: the longest input in tokens of its endpoints, when known. */
  max_input_tokens: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  /** Switchyard: the vectors' width (the widest endpoint's). */
  dimensions: Schema.optionalKey(Schema.Int),
  /** Switchyard: the model is Matryoshka (`true`, or its widths): any answer has the width asked. */
  matryoshka: Schema.optionalKey(Schema.Union([Schema.Literal(true), Schema.Array(Schema.Int)])),
  /** Switchyard: the types an answer can have (`output_dtype`; the gateway makes those a provider does not). */
  output_dtypes: Schema.optionalKey(Schema.Array(Schema.String))
})

/**
 * @since 0.1.0
 */
export type EmbeddingModel = typeof EmbeddingModel.Type

/**
 * The `GET /embeddings/models` body.
 *
 * @since 0.1.0
 */
export const EmbeddingModelList = Schema.Struct({
  data: Schema.Array(EmbeddingModel),
  links: Schema.Struct({ next: Schema.NullOr(Schema.String) }),
  total_count: Count
}).annotate({ identifier: "EmbeddingModelList" })

/**
 * @since 0.1.0
 */
export type EmbeddingModelList = typeof EmbeddingModelList.Type

const IntFromString = (minimum: number, maximum: number) =>
  Schema.String.check(Schema.isPattern(/^(0|[1-9][0-9]{0,8})$/u)).pipe(
    Schema.decodeTo(Schema.Int.check(Schema.isBetween({ minimum, maximum })), {
      decode: SchemaGetter.transform((s) => Number(s)),
      encode: SchemaGetter.transform((n) => String(n))
    })
  )

/**
 * The largest page of the model listing.
 *
 * @since 0.1.0
 */
export const maxPageSize = 500

/**
 * The listing's query, as the SDK sends it: `limit` (1..500, default 500) and `offset`
 * (>= 0, default 0).
 *
 * @since 0.1.0
 */
export const ListModelsQuery = {
  limit: Schema.optionalKey(IntFromString(1, maxPageSize)),
  offset: Schema.optionalKey(IntFromString(0, 999_999_999))
}
