import type { EndpointRecord } from "@switchyard/core/schema/ProviderListing"
import * as Format from "./Format.ts"

/**
 * What an endpoint charges, in the units it charges by: an embeddings endpoint per million
 * tokens, a rerank endpoint per 1,000 searches (or per million tokens where it is billed by
 * token), plus a price per request where there is one. Exact decimals, as the listing gives them;
 * `free` only when every price is zero.
 */
export const describe = (endpoint: Pick<EndpointRecord, "task" | "pricing">): ReadonlyArray<string> => {
  const { pricing } = endpoint
  const parts: Array<string> = []
  if (endpoint.task === "rerank" && pricing.search !== undefined && isPositive(pricing.search)) {
    parts.push(`$${decimal(pricing.search)} / 1,000 searches`)
  }
  if (isPositive(pricing.prompt)) parts.push(`$${Format.perMillion(pricing.prompt)} / M tokens`)
  if (isPositive(pricing.request)) parts.push(`$${decimal(pricing.request)} / request`)
  return parts.length === 0 ? ["free"] : parts
}

const isPositive = (price: string): boolean => /[1-9]/u.test(price) && !price.trim().startsWith("-")

// A decimal string without the zeros that say nothing ("2.000" is "2", "0.50" is "0.5").
const decimal = (price: string): string => {
  const [int = "0", frac = ""] = price.trim().split(".")
  const kept = frac.replace(/0+$/u, "")
  return kept === "" ? int : `${int}.${kept}`
}
