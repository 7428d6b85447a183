import { Quantization, SortBy } from "@switchyard/core/schema/ProviderPreferences"
import { Effect, Option } from "effect"
import { Flag } from "effect/cli"
import { Usage } from "./Failure.ts"
import * as SharedFlags from "./SharedFlags.ts"

export const flags = {
  order: SharedFlags.commaList("order", "SLUGS", "Providers to try first, in this order"),
  only: SharedFlags.commaList("only", "SLUGS", "Use only these providers"),
  ignore: SharedFlags.commaList("ignore", "SLUGS", "Never use these providers"),
  sort: Flag.Literals("sort", SortBy.literals).pipe(
    Flag.withDescription("Rank providers by price, throughput, latency or exacto (no load balancing)"),
    Flag.optional
  ),
  maxPrice: Flag.String("max-price").pipe(
    Flag.withMetavar("USD|KIND=USD,..."),
    Flag.withDescription("Highest price to pay: USD per million prompt tokens, or per kind (prompt=0.05,request=0)"),
    Flag.optional
  ),
  noFallbacks: SharedFlags.toggle("no-fallbacks", "Use only the first choice (or the --order list); fail rather than fall back"),
  zdr: SharedFlags.toggle("zdr", "Only zero-data-retention endpoints"),
  denyDataCollection: SharedFlags.toggle("deny-data-collection", "Only providers that do not store or train on data"),
  quantizations: SharedFlags.commaList("quantizations", "LEVELS", `Only these quantizations (${Quantization.literals.join(", ")})`),
  requireParameters: SharedFlags.toggle("require-parameters", "Only providers that support every parameter sent")
}

export type Input = {
  readonly [K in keyof typeof flags]: typeof flags[K] extends Flag.Flag<infer A> ? A : never
}

const priceKinds = ["prompt", "completion", "image", "audio", "request", "search"] as const

const parseMaxPrice = (text: string) =>
  Effect.gen(function*() {
    const trimmed = text.trim()
    if (!trimmed.includes("=")) return { prompt: trimmed }
    const prices: Record<string, string> = {}
    for (const part of trimmed.split(",")) {
      const [kind, value, ...rest] = part.split("=").map((s) => s.trim())
      if (kind === undefined || value === undefined || rest.length > 0 || !(priceKinds as ReadonlyArray<string>).includes(kind)) {
        return yield* new Usage({
          message: `--max-price: ${JSON.stringify(part)} is not KIND=USD`,
          hint: `Kinds are ${priceKinds.join(", ")}; for example --max-price prompt=0.05,request=0`
        })
      }
      prices[kind] = value
    }
    return prices
  })

export const toPreferences = (input: Input) =>
  Effect.gen(function*() {
    const maxPrice = Option.isSome(input.maxPrice) ? yield* parseMaxPrice(input.maxPrice.value) : undefined
    const preferences = {
      ...(input.order.length > 0 ? { order: input.order } : {}),
      ...(input.only.length > 0 ? { only: input.only } : {}),
      ...(input.ignore.length > 0 ? { ignore: input.ignore } : {}),
      ...(Option.isSome(input.sort) ? { sort: input.sort.value } : {}),
      ...(maxPrice !== undefined ? { max_price: maxPrice } : {}),
      ...(input.noFallbacks ? { allow_fallbacks: false } : {}),
      ...(input.zdr ? { zdr: true } : {}),
      ...(input.denyDataCollection ? { data_collection: "deny" } : {}),
      ...(input.quantizations.length > 0 ? { quantizations: input.quantizations } : {}),
      ...(input.requireParameters ? { require_parameters: true } : {})
    }
    return Object.keys(preferences).length === 0 ? undefined : preferences
  })

/** The request's `provider` field the flags set: `{ provider }`, or nothing when they set none. */
export const providerField = (input: Input) =>
  Effect.map(toPreferences(input), (provider) => (provider === undefined ? {} : { provider }))
