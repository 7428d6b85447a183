/**
 * The catalog's providers and a model's endpoints, as the public API's `providers.list` and
 * `endpoints.list` carry them, with the live figures the gateway measures.
 *
 * **Details**
 *
 * Prices are USD per token as decimal strings (the public API's unit). Latency percentiles are
 * milliseconds and throughput percentiles prompt tokens per second, from this process's traffic
 * over a rolling five-minute window; uptimes are percents of calls that did not fail against the
 * endpoint over the last 5 minutes, 30 minutes and day. Each is `null` without traffic.
 * `status` is 0 when the endpoint can serve the caller, -1 when it failed in the last 30 s, -10
 * when its provider is not active for the caller's workspace. Switchyard adds `provider`,
 * `data_collection`, `zdr`, `dimensions`, `active`, and for embeddings endpoints
 * `max_input_tokens`, `matryoshka`, `output_dtypes` (made natively) and `truncation` (ends cut
 * natively).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * One provider of the catalog.
 *
 * @since 0.1.0
 */
export const ProviderRecord = Schema.Struct({
  slug: Schema.String,
  name: Schema.String,
  privacy_policy_url: Schema.NullOr(Schema.String),
  terms_of_service_url: Schema.NullOr(Schema.String),
  status_page_url: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  data_collection: Schema.Literals(["allow", "deny"]),
  zdr: Schema.Boolean,
  /** For instance administrators only: where the provider is declared, whether it is on, its credential. */
  source: Schema.optionalKey(Schema.Literals(["config", "api"])),
  enabled: Schema.optionalKey(Schema.Boolean),
  api_key: Schema.optionalKey(Schema.Struct({ set: Schema.Boolean, last4: Schema.NullOr(Schema.String) }))
})

/**
 * @since 0.1.0
 */
export type ProviderRecord = typeof ProviderRecord.Type

/**
 * @since 0.1.0
 */
export const ProviderList = Schema.Struct({ data: Schema.Array(ProviderRecord) })

const Percentiles = Schema.Struct({ p50: Schema.Finite, p75: Schema.Finite, p90: Schema.Finite, p99: Schema.Finite })

/**
 * One endpoint of a model.
 *
 * @since 0.1.0
 */
export const EndpointRecord = Schema.Struct({
  name: Schema.String,
  model_id: Schema.String,
  model_name: Schema.String,
  provider_name: Schema.String,
  provider: Schema.String,
  tag: Schema.String,
  context_length: Schema.Int,
  max_prompt_tokens: Schema.NullOr(Schema.Int),
  max_completion_tokens: Schema.NullOr(Schema.Int),
  pricing: Schema.Struct({
    prompt: Schema.String,
    completion: Schema.String,
    request: Schema.String,
    image: Schema.String,
    audio: Schema.String,
    /** USD per 1,000 search units, on rerank endpoints billed by search. */
    search: Schema.optionalKey(Schema.String)
  }),
  quantization: Schema.NullOr(Schema.String),
  status: Schema.Int,
  supported_parameters: Schema.Array(Schema.String),
  supports_implicit_caching: Schema.Boolean,
  supports_tool_choice: Schema.Struct({ auto: Schema.Boolean, function: Schema.Boolean, none: Schema.Boolean, required: Schema.Boolean }),
  latency_last_30m: Schema.NullOr(Percentiles),
  throughput_last_30m: Schema.NullOr(Percentiles),
  uptime_last_5m: Schema.NullOr(Schema.Finite),
  uptime_last_30m: Schema.NullOr(Schema.Finite),
  uptime_last_1d: Schema.NullOr(Schema.Finite),
  data_collection: Schema.Literals(["allow", "deny"]),
  zdr: Schema.Boolean,
  /** The vectors' width (embeddings endpoints). */
  dimensions: Schema.optionalKey(Schema.Int),
  /** The longest input in tokens, when the catalog knows it. */
  max_input_tokens: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  /** The model is Matryoshka: `true` (any width up to `dimensions`) or its widths (embeddings endpoints). */
  matryoshka: Schema.optionalKey(Schema.Union([Schema.Literal(true), Schema.Array(Schema.Int)])),
  /** The types this provider makes natively (`float` always; the gateway makes the others). */
  output_dtypes: Schema.optionalKey(Schema.Array(Schema.String)),
  /** The ends this provider cuts a long input at natively (`truncate: "start"`, `"end"`). */
  truncation: Schema.optionalKey(Schema.Array(Schema.Literals(["start", "end"]))),
  /** What the endpoint does: `embeddings` or `rerank`. */
  task: Schema.Literals(["embeddings", "rerank"]),
  active: Schema.Boolean
})

/**
 * @since 0.1.0
 */
export type EndpointRecord = typeof EndpointRecord.Type

/**
 * `GET /models/{author}/{slug}/endpoints`.
 *
 * @since 0.1.0
 */
export const ModelEndpoints = Schema.Struct({
  data: Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    created: Schema.Int,
    description: Schema.String,
    architecture: Schema.Struct({
      input_modalities: Schema.Array(Schema.String),
      output_modalities: Schema.Array(Schema.String),
      modality: Schema.NullOr(Schema.String),
      instruct_type: Schema.Null,
      tokenizer: Schema.Null
    }),
    endpoints: Schema.Array(EndpointRecord)
  })
})

/**
 * @since 0.1.0
 */
export type ModelEndpoints = typeof ModelEndpoints.Type

/**
 * @since 0.1.0
 */
export const ModelEndpointsParams = {
  author: Schema.String.check(Schema.isMinLength(1)),
  slug: Schema.String.check(Schema.isMinLength(1))
}
