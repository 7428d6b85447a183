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
