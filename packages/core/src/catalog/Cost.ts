/**
 * The exact cost of a request at an endpoint's list price, and its `usage` rendering.
 *
 * **Details**
 *
 * cost = prompt_tokens × prompt / 10^6 + completion_tokens × completion / 10^6
 *        + requests × request + images × image + audio_units × audio
 *        + search_units × search / 10^3
 *
 * Every term is computed in atto-dollars (`bigint`, 10^-18 USD) and is exact, because catalog
 * prices have at most 12 fractional digits (see `Money.Price`).
 *
 * @since 0.1.0
 */
import type { EmbeddingUsage } from "../schema/EmbeddingResponse.ts"
import type { PriceKind, Pricing } from "./Catalog.ts"
import * as Money from "./Money.ts"

/**
 * What a request consumed. `requests` defaults to 1; the rest default to 0.
 *
 * @since 0.1.0
 */
export interface Consumption {
  readonly prompt_tokens: number
  readonly completion_tokens?: number | undefined
  readonly requests?: number | undefined
  readonly images?: number | undefined
  readonly audio_units?: number | undefined
  readonly search_units?: number | undefined
}

/**
 * A cost broken down by price component, each in atto-dollars.
 *
 * @since 0.1.0
 */
export interface Cost {
  readonly prompt: bigint
  readonly completion: bigint
  readonly request: bigint
  readonly image: bigint
  readonly audio: bigint
  readonly search: bigint
  readonly total: bigint
}

const MILLION = 1_000_000n
const THOUSAND = 1_000n

const count = (name: string, n: number | undefined, fallback: number): bigint => {
  const value = n ?? fallback
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, got ${value}`)
  return BigInt(value)
}

/**
 * A pricing's prices in atto-dollars, by kind.
 *
 * @since 0.5.0
 */
export type AttoPricing = { readonly [K in PriceKind]: bigint }

// Parsed once per pricing object: a catalog's pricings are immutable, and every request prices
// each of its candidates more than once.
const parsed = new WeakMap<Pricing, AttoPricing>()

/**
 * The prices of `pricing` in atto-dollars, parsed the first time they are asked for.
 *
 * @since 0.5.0
 */
export const attoPrices = (pricing: Pricing): AttoPricing => {
  let atto = parsed.get(pricing)
  if (atto === undefined) {
    atto = {
      prompt: Money.toAtto(pricing.prompt),
      search: Money.toAtto(pricing.search),
      completion: Money.toAtto(pricing.completion),
      request: Money.toAtto(pricing.request),
      image: Money.toAtto(pricing.image),
      audio: Money.toAtto(pricing.audio)
    }
    parsed.set(pricing, atto)
  }
  return atto
}

/**
 * Computes the exact cost of a consumption at a price.
 *
 * **Gotchas**
 *
 * Throws a `RangeError` when a count is negative or not an integer: counts come from the
 * provider's usage or the gateway's own tally, so a bad one is a bug, not a caller error.
 *
 * @since 0.1.0
 */
export const compute = (pricing: Pricing, usage: Consumption): Cost => {
  const atto = attoPrices(pricing)
  const prompt = (count("prompt_tokens", usage.prompt_tokens, 0) * atto.prompt) / MILLION
  const completion = (count("completion_tokens", usage.completion_tokens, 0) * atto.completion) / MILLION
  const request = count("requests", usage.requests, 1) * atto.request
  const image = count("images", usage.images, 0) * atto.image
  const audio = count("audio_units", usage.audio_units, 0) * atto.audio
  const search = (count("search_units", usage.search_units, 0) * atto.search) / THOUSAND
  return { prompt, completion, request, image, audio, search, total: prompt + completion + request + image + audio + search }
}

/**
 * The `cost` and `cost_details` of `usage`, in credits (USD) as JSON numbers.
 *
 * **Details**
 *
 * Switchyard charges the upstream list price, so `cost` equals `upstream_inference_cost`.
 * The prompt side carries everything but completion tokens (prompt tokens, request, images,
 * audio). `is_byok` is `false`: the gateway's own provider keys are used.
 *
 * @since 0.1.0
 */
export const toUsage = (cost: Cost): Pick<EmbeddingUsage, "cost" | "cost_details" | "is_byok"> => ({
  cost: Money.toNumber(cost.total),
  cost_details: {
    upstream_inference_prompt_cost: Money.toNumber(cost.total - cost.completion),
    upstream_inference_completions_cost: Money.toNumber(cost.completion),
    upstream_inference_cost: Money.toNumber(cost.total)
  },
  is_byok: false
})

/**
 * A per-million-token price as the per-token decimal string OpenRouter's model listing
 * publishes (`"0.02"` becomes `"0.00000002"`).
 *
 * @since 0.1.0
 */
export const perToken = (perMillion: string): string => Money.toDecimal(Money.toAtto(perMillion) / MILLION)
