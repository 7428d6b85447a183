/**
 * Looking back at served requests: one generation's record (`GET /generation`) and daily
 * activity by model and provider (`GET /activity`), in the public API's shapes.
 *
 * **Details**
 *
 * Both are read from the ledger, one row per served request. Money is in credits (USD): sums are
 * exact in the store and turned into JSON numbers at the edge. Fields for things an embeddings
 * gateway does not have (completions, reasoning, media, web search, presets) are `null`.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * What the serving attempt answered in vectors: their width and type, who made each (the
 * provider, or the gateway from its floats), and the long-input mode and who applied it
 * (`routing/EndpointParameters`'s `factsOf`), as the request's ledger row keeps them.
 *
 * @since 0.12.0
 */
export const VectorFacts = Schema.Struct({
  dimensions: Schema.Int,
  dimensions_by: Schema.Literals(["provider", "gateway"]),
  dtype: Schema.String,
  dtype_by: Schema.Literals(["provider", "gateway"]),
  truncate: Schema.String,
  truncate_by: Schema.Literals(["provider", "gateway"])
})

/**
 * One served request, as `GET /generation?id=` returns it in `data`.
 *
 * **Details**
 *
 * Built from the request's ledger row and the record of its upstream calls (`AttemptRecord`):
 * `provider_responses` lists every call in order, a failed one with the provider's status
 * (`null` when it never answered) and `reason`; `upstream_id` is the id the serving provider gave
 * its answer; `generation_time` is the serving call's latency, `latency` the whole request's.
 *
 * Fields the gateway cannot know, and what it answers:
 * - `app_id`, `http_referer`, `user_agent`: not recorded with a request: `null`; `origin`: `""`.
 * - `data_region`: the gateway has no regions: `"global"`.
 * - `cancelled`: a request the caller abandoned leaves no row, so a row found is `false`.
 * - `streamed`: embeddings and rerank are never streamed: `false`.
 * - Completions, reasoning, media, moderation, web search, presets, router, service tier: an
 *   embeddings gateway has none: `null` (completion token counts `0`).
 * - Rows written before attempts were recorded: `provider_responses` and `served_from_cache`
 *   `null`, `upstream_id` and `generation_time` `null`.
 *
 * @since 0.1.0
 */
export const GenerationRecord = Schema.Struct({
  id: Schema.String,
  api_type: Schema.NullOr(Schema.String),
  app_id: Schema.NullOr(Schema.Int),
  cache_discount: Schema.NullOr(Schema.Finite),
  cancelled: Schema.NullOr(Schema.Boolean),
  created_at: Schema.String,
  data_region: Schema.String,
  external_user: Schema.NullOr(Schema.String),
  finish_reason: Schema.NullOr(Schema.String),
  generation_time: Schema.NullOr(Schema.Finite),
  http_referer: Schema.NullOr(Schema.String),
  is_byok: Schema.Boolean,
  latency: Schema.NullOr(Schema.Finite),
  model: Schema.String,
  moderation_latency: Schema.NullOr(Schema.Finite),
  native_finish_reason: Schema.NullOr(Schema.String),
  native_tokens_cached: Schema.NullOr(Schema.Int),
  native_tokens_completion: Schema.NullOr(Schema.Int),
  native_tokens_completion_images: Schema.NullOr(Schema.Int),
  native_tokens_prompt: Schema.NullOr(Schema.Int),
  native_tokens_reasoning: Schema.NullOr(Schema.Int),
  num_fetches: Schema.NullOr(Schema.Int),
  num_input_audio_prompt: Schema.NullOr(Schema.Int),
  num_media_completion: Schema.NullOr(Schema.Int),
  num_media_prompt: Schema.NullOr(Schema.Int),
  num_search_results: Schema.NullOr(Schema.Int),
  origin: Schema.String,
  preset_id: Schema.NullOr(Schema.String),
  provider_name: Schema.NullOr(Schema.String),
  provider_responses: Schema.NullOr(Schema.Array(Schema.Struct({
    endpoint_id: Schema.optionalKey(Schema.String),
    is_byok: Schema.optionalKey(Schema.Boolean),
    latency: Schema.optionalKey(Schema.Finite),
    model_permaslug: Schema.optionalKey(Schema.String),
    provider_name: Schema.optionalKey(Schema.String),
    /** The provider's HTTP status; `null` when it never answered (refused connection, timeout). */
    status: Schema.NullOr(Schema.Int),
    /** The id the provider gave its answer, when it gave one. */
    id: Schema.optionalKey(Schema.String),
    /** Switchyard: why the call failed (`UpstreamError`'s reason); absent for the call that served. */
    reason: Schema.optionalKey(Schema.String)
  }))),
  router: Schema.NullOr(Schema.String),
  service_tier: Schema.NullOr(Schema.String),
  streamed: Schema.NullOr(Schema.Boolean),
  tokens_completion: Schema.NullOr(Schema.Int),
  tokens_prompt: Schema.NullOr(Schema.Int),
  total_cost: Schema.Finite,
  upstream_id: Schema.NullOr(Schema.String),
  upstream_inference_cost: Schema.NullOr(Schema.Finite),
  usage: Schema.Finite,
  user_agent: Schema.NullOr(Schema.String),
  web_search_engine: Schema.NullOr(Schema.String),
  workspace_id: Schema.NullOr(Schema.String),
  /** Switchyard: whether the embeddings cache answered some or all of the input items. */
  cached: Schema.Boolean,
  /**
   * Switchyard: whether the embeddings cache answered every item, so that no upstream call was
   * made (`provider_responses` is then empty); `null` for rows written before calls were recorded.
   */
  served_from_cache: Schema.NullOr(Schema.Boolean),
  /** Switchyard: the serving provider's slug (the catalog's), beside its display name. */
  provider: Schema.String,
  tokens_total: Schema.Int,
  /**
   * Switchyard: how a batch's line was run: `provider_batch` (in a job at the provider's own
   * batch API, at its batch price) or `live` (as a live call); `null` for a request.
   */
  batch_mode: Schema.NullOr(Schema.Literals(["provider_batch", "live"])),
  /**
   * Switchyard, embeddings served by a provider: the vectors' width and type, whether each was
   * made by the provider or by the gateway from its floats (a Matryoshka cut, a quantized type),
   * and the long-input mode and who applied it.
   */
  vector: Schema.optionalKey(VectorFacts)
})

/**
 * @since 0.1.0
 */
export type GenerationRecord = typeof GenerationRecord.Type

/**
 * @since 0.1.0
 */
export const GenerationResponse = Schema.Struct({ data: GenerationRecord })

/**
 * `GET /generation?id=`.
 *
 * @since 0.1.0
 */
export const GenerationQuery = {
  id: Schema.String.check(
    Schema.isMinLength(1, { message: "id must name a generation" }),
    Schema.isMaxLength(200, { message: "id must be at most 200 characters" })
  )
}

/**
 * One day's usage of one model at one provider.
 *
 * @since 0.1.0
 */
export const ActivityItem = Schema.Struct({
  date: Schema.String,
  model: Schema.String,
  model_permaslug: Schema.String,
  endpoint_id: Schema.String,
  provider_name: Schema.String,
  usage: Schema.Finite,
  byok_usage_inference: Schema.Finite,
  requests: Schema.Int,
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  reasoning_tokens: Schema.Int,
  /** Switchyard: the part of `prompt_tokens` the embeddings cache answered (no upstream call). */
  cached_tokens: Schema.optionalKey(Schema.Int),
  /** Switchyard: what those cached tokens would cost at the endpoint's current prompt price, USD. */
  cache_savings: Schema.optionalKey(Schema.Finite),
  workspace_id: Schema.optionalKey(Schema.String),
  /** Switchyard: the model's task, as `GET /generation`'s `api_type` names it. */
  task: Schema.optionalKey(Schema.Literals(["embeddings", "rerank"]))
})

/**
 * @since 0.1.0
 */
export type ActivityItem = typeof ActivityItem.Type

/**
 * @since 0.1.0
 */
export const ActivityResponse = Schema.Struct({ data: Schema.Array(ActivityItem) })

/**
 * `GET /activity`: `date` (one UTC day of the last 30 or today), `api_key_hash`, `user_id`,
 * `workspace_id` filters, and `group_by=workspace`.
 *
 * @since 0.1.0
 */
export const ActivityQuery = {
  date: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/u, { message: "date must be YYYY-MM-DD" }))),
  api_key_hash: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[0-9a-f]{64}$/u, {
    message: "api_key_hash must be a key's hash (64 hex digits)"
  }))),
  user_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  group_by: Schema.optionalKey(Schema.Literals(["workspace"]))
}

/**
 * One model call that failed, as the gateway process that answered it remembers it: when, the
 * status it answered, why (the error's reason code and message), the model asked for, the
 * provider tried last, and every upstream attempt with its outcome.
 *
 * @since 0.1.0
 */
export const FailureRecord = Schema.Struct({
  /** The failure's number in the answering process (counts from 1 at its start). */
  id: Schema.Int,
  at: Schema.String,
  status: Schema.Int,
  task: Schema.Literals(["embeddings", "rerank"]),
  model: Schema.NullOr(Schema.String),
  provider: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String),
  message: Schema.String,
  key: Schema.NullOr(Schema.String),
  attempts: Schema.Array(Schema.Struct({
    provider: Schema.String,
    outcome: Schema.Literals(["success", "failure", "skipped"]),
    reason: Schema.NullOr(Schema.String)
  }))
})

/**
 * @since 0.1.0
 */
export type FailureRecord = typeof FailureRecord.Type

/**
 * `GET /activity/failures`: the workspace's most recent failed model calls, newest first.
 *
 * @since 0.1.0
 */
export const FailuresResponse = Schema.Struct({ data: Schema.Array(FailureRecord) })

/**
 * The query of `GET /activity/failures`: an optional `workspace_id` (default: the calling key's).
 *
 * @since 0.1.0
 */
export const FailuresQuery = {
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1)))
}
