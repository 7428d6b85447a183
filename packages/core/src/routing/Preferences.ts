/**
 * The preferences routing actually applies: the request's `provider` object merged with the
 * workspace's settings, nulls resolved to defaults.
 *
 * **Details**
 *
 * A request can only narrow what its workspace allows:
 * - `only`: both lists apply (an endpoint must match the request's `only` and the workspace's),
 *   which is their intersection;
 * - `ignore`: the union of both lists;
 * - `data_collection`: `deny` if either says `deny`;
 * - `zdr`: `true` if either says `true`.
 *
 * `null`, absent and empty lists mean "no restriction" for `only` and `quantizations`.
 *
 * @since 0.1.0
 */
import type { Workspace } from "../catalog/Catalog.ts"
import * as Money from "../catalog/Money.ts"
import type {
  DataCollection,
  MaxPrice,
  Partition,
  PerformanceCutoff,
  ProviderPreferences,
  Quantization,
  SortBy
} from "../schema/ProviderPreferences.ts"

/**
 * Latency (seconds) or throughput (tokens per second) cutoffs, by percentile.
 *
 * @since 0.1.0
 */
export interface Cutoffs {
  readonly p50?: number
  readonly p75?: number
  readonly p90?: number
  readonly p99?: number
}

/**
 * The price kinds `max_price` can limit, each a field of an endpoint's pricing.
 *
 * @since 0.4.0
 */
export const limitedPrices = ["prompt", "completion", "image", "audio", "request", "search"] as const

/**
 * `max_price` as exact atto-dollar limits (see `Money`).
 *
 * @since 0.1.0
 */
interface PriceLimits {
  readonly prompt?: bigint
  readonly completion?: bigint
  readonly image?: bigint
  readonly audio?: bigint
  readonly request?: bigint
  readonly search?: bigint
}

/**
 * The merged, resolved preferences.
 *
 * @since 0.1.0
 */
export interface Effective {
  readonly allow_fallbacks: boolean
  readonly only: ReadonlyArray<string> | null
  readonly workspace_only: ReadonlyArray<string> | null
  readonly ignore: ReadonlyArray<string>
  readonly order: ReadonlyArray<string> | null
  readonly data_collection: DataCollection
  readonly zdr: boolean
  readonly enforce_distillable_text: boolean
  readonly require_parameters: boolean
  readonly quantizations: ReadonlyArray<Quantization> | null
  readonly max_price: PriceLimits
  readonly sort: { readonly by: SortBy; readonly partition: Partition } | null
  readonly preferred_max_latency: Cutoffs | null
  readonly preferred_min_throughput: Cutoffs | null
}

const list = <A>(value: ReadonlyArray<A> | null | undefined): ReadonlyArray<A> | null =>
  value === null || value === undefined || value.length === 0 ? null : value

const cutoffs = (value: PerformanceCutoff | null | undefined): Cutoffs | null => {
  if (value === null || value === undefined) return null
  if (typeof value === "number") return { p50: value }
  const out: { p50?: number; p75?: number; p90?: number; p99?: number } = {}
  for (const key of ["p50", "p75", "p90", "p99"] as const) {
    const v = value[key]
    if (typeof v === "number") out[key] = v
  }
  return Object.keys(out).length === 0 ? null : out
}

const limits = (maxPrice: MaxPrice | undefined): PriceLimits => {
  const out: { -readonly [K in keyof PriceLimits]: bigint } = {}
  if (maxPrice === undefined) return out
  for (const key of limitedPrices) {
    const v = maxPrice[key]
    if (v !== undefined) out[key] = Money.toAtto(v)
  }
  return out
}

const sortOf = (sort: ProviderPreferences["sort"]): Effective["sort"] => {
  if (sort === null || sort === undefined) return null
  if (typeof sort === "string") return { by: sort, partition: "model" }
  if (sort.by === null || sort.by === undefined) return null
  return { by: sort.by, partition: sort.partition ?? "model" }
}

/**
 * Merges a request's `provider` object (or its absence) with its workspace's settings.
 *
 * @since 0.1.0
 */
export const effective = (request: ProviderPreferences | null | undefined, workspace: Workspace): Effective => {
  const p = request ?? {}
  return {
    allow_fallbacks: p.allow_fallbacks ?? true,
    only: list(p.only),
    workspace_only: list(workspace.only),
    ignore: [...new Set([...workspace.ignore, ...(p.ignore ?? [])])],
    order: list(p.order),
    data_collection: workspace.data_collection === "deny" || p.data_collection === "deny" ? "deny" : "allow",
    zdr: workspace.zdr || p.zdr === true,
    enforce_distillable_text: p.enforce_distillable_text ?? false,
    require_parameters: p.require_parameters ?? false,
    quantizations: list(p.quantizations),
    max_price: limits(p.max_price),
    sort: sortOf(p.sort),
    preferred_max_latency: cutoffs(p.preferred_max_latency),
    preferred_min_throughput: cutoffs(p.preferred_min_throughput)
  }
}
