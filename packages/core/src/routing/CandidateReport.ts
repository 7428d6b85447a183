/**
 * What a route plan did with one endpoint, as the explain report and `NoEligibleProvider` carry it.
 *
 * @since 0.1.0
 */
import type { FilterName } from "./Filters.ts"

/**
 * What the plan did with one endpoint. `status` is `attempt` (in the plan, at `rank`),
 * `excluded` (removed by `excluded_by`) or `unused` (eligible, but left out because
 * `allow_fallbacks` is `false`).
 *
 * @since 0.1.0
 */
export interface CandidateReport {
  readonly id: string
  readonly provider: string
  readonly variant: string
  readonly prompt_price: string
  /** On a rerank endpoint: its price per 1,000 search units, beside the per-million-token one. */
  readonly search_price?: string
  readonly status: "attempt" | "excluded" | "unused"
  readonly rank?: number
  readonly excluded_by?: FilterName
  readonly detail?: string
  readonly order_match?: string
  readonly weight?: number
  readonly sort_key?: string | number | null
  readonly meets_cutoffs?: boolean
  readonly recent_failure?: boolean
  /** Parameters the request sent that this endpoint does not support and is served without. */
  readonly missing_parameters?: ReadonlyArray<string>
}

/**
 * An endpoint's price as a person reads it: `$0.02/M tokens`, or for a rerank endpoint the kinds it
 * charges (`$2/1k searches`, `$0.05/M tokens`, both, or `free`).
 *
 * @since 0.4.0
 */
export const priceText = (candidate: Pick<CandidateReport, "prompt_price" | "search_price">): string => {
  const tokens = `$${candidate.prompt_price}/M tokens`
  if (candidate.search_price === undefined) return tokens
  const parts = [
    ...(Number(candidate.search_price) !== 0 ? [`$${candidate.search_price}/1k searches`] : []),
    ...(Number(candidate.prompt_price) !== 0 ? [tokens] : [])
  ]
  return parts.length === 0 ? "free" : parts.join(" + ")
}
