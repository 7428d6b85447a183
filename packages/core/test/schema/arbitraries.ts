import * as fc from "fast-check"

const nonEmptyString = fc.string({ minLength: 1, maxLength: 12 })
const tokenId = fc.nat({ max: 200_000 })

const media = fc.record({ data: fc.string({ maxLength: 16 }), format: fc.constantFrom("wav", "mp4", "pdf") }, {
  requiredKeys: ["data"]
})

const contentPart = fc.oneof(
  fc.record({ type: fc.constant("text" as const), text: nonEmptyString }),
  fc.record({ type: fc.constant("image_url" as const), image_url: fc.record({ url: fc.webUrl() }) }),
  fc.record({ type: fc.constant("input_audio" as const), input_audio: media }),
  fc.record({ type: fc.constant("input_video" as const), input_video: media }),
  fc.record({ type: fc.constant("input_file" as const), input_file: media })
)

const input = fc.oneof(
  nonEmptyString,
  fc.array(nonEmptyString, { minLength: 1, maxLength: 5 }),
  fc.array(tokenId, { minLength: 1, maxLength: 5 }),
  fc.array(fc.array(tokenId, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }),
  fc.array(fc.record({ content: fc.array(contentPart, { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 3 })
)

const decimal = fc.tuple(fc.nat({ max: 999 }), fc.nat({ max: 999_999 })).map(([w, f]) => `${w}.${f}`.replace(/\.?0+$/u, "") || "0")
const priceLimit = decimal
const cutoff = fc.double({ min: 0, max: 100, noNaN: true, noDefaultInfinity: true })
const percentiles = fc.record({
  p50: fc.option(cutoff),
  p75: fc.option(cutoff),
  p90: fc.option(cutoff),
  p99: fc.option(cutoff)
}, { requiredKeys: [] })
const slugs = fc.option(fc.array(fc.constantFrom("openai", "deepinfra", "deepinfra/fp8", "together", "x"), { maxLength: 4 }))

export const providerPreferences = fc.record({
  allow_fallbacks: fc.option(fc.boolean()),
  data_collection: fc.option(fc.constantFrom("allow", "deny")),
  enforce_distillable_text: fc.option(fc.boolean()),
  ignore: slugs,
  only: slugs,
  order: slugs,
  max_price: fc.record({
    prompt: priceLimit,
    completion: priceLimit,
    image: priceLimit,
    audio: priceLimit,
    request: priceLimit
  }, { requiredKeys: [] }),
  preferred_max_latency: fc.option(fc.oneof(cutoff, percentiles)),
  preferred_min_throughput: fc.option(fc.oneof(cutoff, percentiles)),
  quantizations: fc.option(fc.array(fc.constantFrom("int4", "int8", "fp8", "fp16", "bf16", "fp32", "unknown"), { maxLength: 3 })),
  require_parameters: fc.option(fc.boolean()),
  sort: fc.option(fc.oneof(
    fc.constantFrom("price", "throughput", "latency", "exacto"),
    fc.record({
      by: fc.option(fc.constantFrom("price", "throughput", "latency", "exacto")),
      partition: fc.option(fc.constantFrom("model", "none"))
    }, { requiredKeys: [] })
  )),
  zdr: fc.option(fc.boolean())
}, { requiredKeys: [] })

export const trace = fc.record({
  trace_id: fc.string(),
  trace_name: fc.string(),
  span_name: fc.string(),
  generation_name: fc.string(),
  parent_span_id: fc.string(),
  custom: fc.jsonValue()
}, { requiredKeys: [] })

const model = fc.tuple(fc.constantFrom("openai", "baai", "switchyard"), fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/))
  .map(([v, m]) => `${v}/${m}`)

export const embeddingRequest = fc.record({
  input,
  model,
  dimensions: fc.integer({ min: 1, max: 4096 }),
  encoding_format: fc.constantFrom("float", "base64"),
  input_type: fc.string(),
  provider: fc.option(providerPreferences),
  session_id: fc.string({ maxLength: 256 }),
  trace,
  user: fc.string()
}, { requiredKeys: ["input", "model"] })
