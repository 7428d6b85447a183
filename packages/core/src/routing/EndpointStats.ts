/**
 * Live facts about an endpoint that routing reads: latency and throughput percentiles and the
 * time of its last failure. The server measures them; routing only reads a snapshot.
 *
 * @since 0.1.0
 */
import type { Candidate } from "./Candidates.ts"
import type { Cutoffs, Effective } from "./Preferences.ts"

/**
 * Percentiles of a measurement.
 *
 * @since 0.1.0
 */
export interface Percentiles {
  readonly p50?: number | undefined
  readonly p75?: number | undefined
  readonly p90?: number | undefined
  readonly p99?: number | undefined
}

/**
 * What is known about one endpoint. Every field may be missing (a new endpoint has no history).
 *
 * @since 0.1.0
 */
export interface EndpointStats {
  /** Seconds from request to complete answer. */
  readonly latency?: Percentiles | undefined
  /** Tokens per second. */
  readonly throughput?: Percentiles | undefined
  /** Epoch milliseconds of the last failure that counted against the endpoint. */
  readonly lastFailureAt?: number | undefined
}

/**
 * Statistics by candidate id (`Candidates.endpointId`): a map, a record, or a function that
 * reads one endpoint's (so a plan reads only its candidates').
 *
 * @since 0.1.0
 */
export type StatsById =
  | ReadonlyMap<string, EndpointStats>
  | { readonly [id: string]: EndpointStats | undefined }
  | ((id: string) => EndpointStats | undefined)

/**
 * The statistics of one candidate, `{}` when none are known.
 *
 * @since 0.1.0
 */
export const lookup = (stats: StatsById, candidate: Candidate): EndpointStats => {
  const found = typeof stats === "function"
    ? stats(candidate.id)
    : stats instanceof Map
    ? stats.get(candidate.id)
    : (stats as { readonly [id: string]: EndpointStats | undefined })[candidate.id]
  return found ?? {}
}

/**
 * How long after a failure the default strategy leaves an endpoint out of the random pick.
 *
 * @since 0.1.0
 */
const failureWindowMs = 30_000

/**
 * Whether the endpoint failed within {@link failureWindowMs} before `now`.
 *
 * @since 0.1.0
 */
export const recentlyFailed = (stats: EndpointStats, now: number): boolean =>
  stats.lastFailureAt !== undefined && now - stats.lastFailureAt < failureWindowMs

const holds = (cutoffs: Cutoffs | null, measured: Percentiles | undefined, ok: (value: number, cutoff: number) => boolean) => {
  if (cutoffs === null) return true
  for (const key of ["p50", "p75", "p90", "p99"] as const) {
    const cutoff = cutoffs[key]
    if (cutoff === undefined) continue
    const value = measured?.[key]
    if (value === undefined || !ok(value, cutoff)) return false
  }
  return true
}

/**
 * Whether an endpoint meets every latency and throughput cutoff the caller gave. An endpoint
 * with no measurement for a given percentile does not meet it.
 *
 * **Details**
 *
 * Missing the cutoffs only moves an endpoint behind those that meet them; it is never
 * excluded.
 *
 * @since 0.1.0
 */
export const meetsCutoffs = (preferences: Effective, stats: EndpointStats): boolean =>
  holds(preferences.preferred_max_latency, stats.latency, (v, c) => v <= c) &&
  holds(preferences.preferred_min_throughput, stats.throughput, (v, c) => v >= c)
