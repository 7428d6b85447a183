/**
 * The `provider` field of a request: the caller's provider routing preferences, with the same
 * field names and value shapes as OpenRouter's `ProviderPreferences`.
 *
 * **Details**
 *
 * - Every field is optional and, except `max_price`, may be `null` (the same as absent).
 * - Unknown properties are refused with a message naming the property, in this object and in
 *   its nested objects (`max_price`, `sort`, the percentile cutoffs), so a typo such as
 *   `"max_prise"` is a 400 rather than a silently ignored limit.
 * - `max_price` values are decimal USD strings, as the interface and the official SDK type
 *   them. A JSON number is refused (400 naming the field), as are negative amounts, `NaN`
 *   strings and strings with more than 18 fractional digits.
 * - Latency cutoffs are seconds, throughput cutoffs tokens per second; both are finite and
 *   non-negative. A plain number is the p50 cutoff.
 *
 * @see https://openrouter.ai/docs/features/provider-routing
 * @since 0.1.0
 */
import { Schema, SchemaTransformation } from "effect"

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&")

/**
 * A struct that refuses properties it does not declare, naming the offending key, whatever
 * `onExcessProperty` the caller decodes with.
 */
const closed = <const Fields extends Schema.Struct.Fields>(fields: Fields) => {
  const known = Object.keys(fields)
  const UnknownKey = Schema.String.check(
    Schema.isPattern(new RegExp(`^(?!(?:${known.map(escapeRegExp).join("|")})$)`, "u"))
  )
  const Refused = Schema.Never.annotate({
    message: `unknown property; allowed here: ${known.join(", ")}`
  })
  const shape = Schema.Struct(fields)
  return Schema.StructWithRest(shape, [Schema.Record(UnknownKey, Refused)]).pipe(
    Schema.decodeTo(Schema.toType(shape), SchemaTransformation.passthrough({ strict: false }))
  )
}

/**
 * A quantization level of an endpoint's weights.
 *
 * @since 0.1.0
 */
export const Quantization = Schema.Literals([
  "int4",
  "int8",
  "fp4",
  "mxfp4",
  "nvfp4",
  "fp6",
  "fp8",
  "mxfp8",
  "fp16",
  "bf16",
  "fp32",
  "unknown"
])

/**
 * @since 0.1.0
 */
export type Quantization = typeof Quantization.Type

/**
 * Whether providers that store or train on prompts are acceptable.
 *
 * @since 0.1.0
 */
export const DataCollection = Schema.Literals(["allow", "deny"])

/**
 * @since 0.1.0
 */
export type DataCollection = typeof DataCollection.Type

/**
 * What `sort` orders endpoints by.
 *
 * @since 0.1.0
 */
export const SortBy = Schema.Literals(["price", "throughput", "latency", "exacto"])

/**
 * @since 0.1.0
 */
export type SortBy = typeof SortBy.Type

/**
 * `model` sorts within each model (fallback models stay fallbacks); `none` sorts all
 * endpoints together.
 *
 * @since 0.1.0
 */
export const Partition = Schema.Literals(["model", "none"])

/**
 * @since 0.1.0
 */
export type Partition = typeof Partition.Type

/**
 * The object form of `sort`.
 *
 * @since 0.1.0
 */
const ProviderSortConfig = closed({
  by: Schema.optionalKey(Schema.NullOr(SortBy)),
  partition: Schema.optionalKey(Schema.NullOr(Partition))
})

/**
 * `sort`: a strategy name or `{ by, partition }`.
 *
 * @since 0.1.0
 */
const ProviderSort = Schema.Union([SortBy, ProviderSortConfig])

const Cutoff = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * Per-percentile cutoffs; every one given must hold for an endpoint to be preferred.
 *
 * @since 0.1.0
 */
const PercentileCutoffs = closed({
  p50: Schema.optionalKey(Schema.NullOr(Cutoff)),
  p75: Schema.optionalKey(Schema.NullOr(Cutoff)),
  p90: Schema.optionalKey(Schema.NullOr(Cutoff)),
  p99: Schema.optionalKey(Schema.NullOr(Cutoff))
})

/**
 * A latency (seconds) or throughput (tokens per second) preference: a p50 cutoff or
 * per-percentile cutoffs.
 *
 * @since 0.1.0
 */
export const PerformanceCutoff = Schema.Union([Cutoff, PercentileCutoffs])

/**
 * @since 0.1.0
 */
export type PerformanceCutoff = typeof PerformanceCutoff.Type

/**
 * A USD limit: a decimal string (`"0.02"`), as the interface and the official SDK type it. A
 * JSON number is refused with the field named, so a limit is never read from a binary float.
 *
 * @since 0.1.0
 */
const PriceLimit = Schema.String.annotate({ message: "Expected a decimal string of USD such as \"0.02\" (a string, not a number)" }).check(
  Schema.isPattern(/^(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})?$/u, {
    expected: "a non-negative decimal string such as \"0.02\" (at most 18 digits after the point)"
  })
)

/**
 * `max_price`: the most the caller will pay, in USD, per million prompt or completion tokens,
 * per image, per audio unit, per request and (rerank) per 1,000 search units.
 *
 * @since 0.1.0
 */
export const MaxPrice = closed({
  prompt: Schema.optionalKey(PriceLimit),
  completion: Schema.optionalKey(PriceLimit),
  image: Schema.optionalKey(PriceLimit),
  audio: Schema.optionalKey(PriceLimit),
  request: Schema.optionalKey(PriceLimit),
  search: Schema.optionalKey(PriceLimit)
})

/**
 * @since 0.1.0
 */
export type MaxPrice = typeof MaxPrice.Type

const SlugList = Schema.Array(Schema.String)

/**
 * The `provider` object.
 *
 * **Gotchas**
 *
 * Slugs in `only`, `ignore` and `order` are free strings: an unknown slug simply matches no
 * endpoint. See `routing/Filters.ts` for how `"provider"` and `"provider/variant"` match.
 *
 * @since 0.1.0
 */
export const ProviderPreferences = closed({
  allow_fallbacks: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  data_collection: Schema.optionalKey(Schema.NullOr(DataCollection)),
  enforce_distillable_text: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  ignore: Schema.optionalKey(Schema.NullOr(SlugList)),
  only: Schema.optionalKey(Schema.NullOr(SlugList)),
  order: Schema.optionalKey(Schema.NullOr(SlugList)),
  max_price: Schema.optionalKey(MaxPrice),
  preferred_max_latency: Schema.optionalKey(Schema.NullOr(PerformanceCutoff)),
  preferred_min_throughput: Schema.optionalKey(Schema.NullOr(PerformanceCutoff)),
  quantizations: Schema.optionalKey(Schema.NullOr(Schema.Array(Quantization))),
  require_parameters: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  sort: Schema.optionalKey(Schema.NullOr(ProviderSort)),
  zdr: Schema.optionalKey(Schema.NullOr(Schema.Boolean))
}).annotate({ identifier: "ProviderPreferences" })

/**
 * @since 0.1.0
 */
export type ProviderPreferences = typeof ProviderPreferences.Type
