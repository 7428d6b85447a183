/**
 * Routing step 3: the orders endpoints can be sorted by.
 *
 * **Details**
 *
 * - `price`: cheapest first, by prompt price per million tokens, then the price per 1,000
 *   search units (rerank), then request, image and audio price.
 * - `throughput`: highest p50 tokens per second first; unmeasured endpoints last.
 * - `latency`: lowest p50 seconds first; unmeasured endpoints last.
 * - `exacto`: quality first, for embeddings meaning fidelity of the vectors: the most precise
 *   weights first (fp32, then 16-bit, 8-bit, 6-bit, 4-bit; unknown last), then endpoints
 *   without a recent failure, then price.
 *
 * Every order ends with the candidate id, so sorting is total and deterministic.
 *
 * @since 0.1.0
 */
import { Order } from "effect"
import * as Cost from "../catalog/Cost.ts"
import * as Money from "../catalog/Money.ts"
import type { Partition, Quantization, SortBy } from "../schema/ProviderPreferences.ts"
import type { Candidate } from "./Candidates.ts"
import type { StatsById } from "./EndpointStats.ts"
import { lookup, recentlyFailed } from "./EndpointStats.ts"

/**
 * Bits per weight of a quantization, 0 when unknown.
 *
 * @since 0.1.0
 */
export const quantizationBits: Record<Quantization, number> = {
  fp32: 32,
  fp16: 16,
  bf16: 16,
  fp8: 8,
  mxfp8: 8,
  int8: 8,
  fp6: 6,
  fp4: 4,
  mxfp4: 4,
  nvfp4: 4,
  int4: 4,
  unknown: 0
}

/**
 * The price an endpoint is weighed and explained by: its per-million-token `prompt` price, or,
 * given what the request is expected to consume, what it would cost there (USD).
 *
 * @since 0.4.0
 */
const priceKeyOf = (candidate: Candidate, consumption?: Cost.Consumption | undefined): string =>
  consumption === undefined ? candidate.endpoint.pricing.prompt : Money.toDecimal(costAt(candidate, consumption))

/**
 * {@link priceKeyOf} in atto-dollars: what the default mode's draw weighs.
 *
 * @since 0.5.0
 */
export const priceOf = (candidate: Candidate, consumption?: Cost.Consumption | undefined): bigint =>
  consumption === undefined ? Cost.attoPrices(candidate.endpoint.pricing).prompt : costAt(candidate, consumption)

const byId: Order.Order<Candidate> = Order.mapInput(Order.String, (c: Candidate) => c.id)

const price = (kind: "prompt" | "search" | "request" | "image" | "audio") =>
  Order.mapInput(Order.BigInt, (c: Candidate) => Cost.attoPrices(c.endpoint.pricing)[kind])

/**
 * Cheapest first.
 *
 * @since 0.1.0
 */
export const byPrice: Order.Order<Candidate> = Order.combineAll([
  price("prompt"),
  price("search"),
  price("request"),
  price("image"),
  price("audio"),
  byId
])

/**
 * Cheapest first for a request expected to consume `consumption`: by what it would cost at each
 * endpoint, then as {@link byPrice}. Without a consumption, {@link byPrice}. Endpoints priced in
 * different units (per token, per search) compare only this way.
 *
 * @since 0.4.0
 */
export const byPriceFor = (consumption: Cost.Consumption | undefined): Order.Order<Candidate> =>
  consumption === undefined
    ? byPrice
    : Order.combineAll([Order.mapInput(Order.BigInt, (c: Candidate) => costAt(c, consumption)), byPrice])

const costAt = (c: Candidate, consumption: Cost.Consumption) => Cost.compute(c.endpoint.pricing, consumption).total

const measuredFirst = (read: (c: Candidate) => number | undefined, descending: boolean): Order.Order<Candidate> =>
  Order.make((a, b) => {
    const x = read(a)
    const y = read(b)
    if (x === undefined && y === undefined) return 0
    if (x === undefined) return 1
    if (y === undefined) return -1
    return descending ? Order.Number(y, x) : Order.Number(x, y)
  })

/**
 * Highest p50 throughput first.
 *
 * @since 0.1.0
 */
export const byThroughput = (stats: StatsById, cheapest: Order.Order<Candidate> = byPrice): Order.Order<Candidate> =>
  Order.combineAll([measuredFirst((c) => lookup(stats, c).throughput?.p50, true), cheapest])

/**
 * Lowest p50 latency first.
 *
 * @since 0.1.0
 */
export const byLatency = (stats: StatsById, cheapest: Order.Order<Candidate> = byPrice): Order.Order<Candidate> =>
  Order.combineAll([measuredFirst((c) => lookup(stats, c).latency?.p50, false), cheapest])

/**
 * Most precise weights first, then healthy, then cheapest.
 *
 * @since 0.1.0
 */
export const byExacto = (stats: StatsById, now: number, cheapest: Order.Order<Candidate> = byPrice): Order.Order<Candidate> =>
  Order.combineAll([
    Order.flip(Order.mapInput(Order.Number, (c: Candidate) => quantizationBits[c.endpoint.quantization])),
    Order.mapInput(Order.Boolean, (c: Candidate) => recentlyFailed(lookup(stats, c), now)),
    cheapest
  ])

/**
 * The order of a sort strategy.
 *
 * @since 0.1.0
 */
export const orderOf = (
  by: SortBy,
  stats: StatsById,
  now: number,
  consumption?: Cost.Consumption | undefined
): Order.Order<Candidate> => {
  const cheapest = byPriceFor(consumption)
  switch (by) {
    case "price":
      return cheapest
    case "throughput":
      return byThroughput(stats, cheapest)
    case "latency":
      return byLatency(stats, cheapest)
    case "exacto":
      return byExacto(stats, now, cheapest)
  }
}

/**
 * What an endpoint was sorted on, for the plan's explanation.
 *
 * @since 0.1.0
 */
export const sortKey = (
  by: SortBy,
  candidate: Candidate,
  stats: StatsById,
  now: number,
  consumption?: Cost.Consumption | undefined
): string | number | null => {
  const s = lookup(stats, candidate)
  switch (by) {
    case "price":
      return priceKeyOf(candidate, consumption)
    case "throughput":
      return s.throughput?.p50 ?? null
    case "latency":
      return s.latency?.p50 ?? null
    case "exacto":
      return `${candidate.endpoint.quantization}${recentlyFailed(s, now) ? " (recent failure)" : ""}`
  }
}

/**
 * Sorts candidates. With `partition` `model`, endpoints stay grouped by model (in order of the
 * first appearance of each model) and are sorted within each group; with `none`, all are sorted
 * together.
 *
 * **Gotchas**
 *
 * An embeddings request names one model, so both partitions give the same result today; the
 * distinction matters once fallback models exist.
 *
 * @since 0.1.0
 */
export const sort = (
  candidates: ReadonlyArray<Candidate>,
  order: Order.Order<Candidate>,
  partition: Partition
): ReadonlyArray<Candidate> => {
  if (partition === "none") return [...candidates].sort(order)
  const groups = new Map<string, Array<Candidate>>()
  for (const c of candidates) {
    const model = c.endpoint.model.toLowerCase()
    const group = groups.get(model)
    if (group === undefined) groups.set(model, [c])
    else group.push(c)
  }
  return [...groups.values()].flatMap((group) => group.sort(order))
}
