import type { CallerShape } from "@switchyard/core/api/Authorization"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect } from "effect"
import type { EndpointHealth } from "./EndpointHealth.ts"

/**
 * What every finished attempt leaves behind, whatever the task: a success feeds the endpoint's
 * latency and throughput (`tokensOf` its answer per second), a failure that counts against the
 * endpoint opens its outage window, and every failure is logged with its redacted reason.
 */
export const make = <A>(health: EndpointHealth["Service"], tokensOf: (value: A) => number) =>
(caller: CallerShape) =>
(observed: Fallback.Observed<A>): Effect.Effect<void> => {
  const id = observed.attempt.candidate.id
  if (observed._tag === "Success") {
    const seconds = Math.max(observed.latencyMs / 1000, 1e-6)
    health.success(id, { at: observed.at, latencySeconds: seconds, tokensPerSecond: tokensOf(observed.value) / seconds })
    return Effect.void
  }
  if (observed.error.countsAgainstEndpoint) health.failure(id, observed.at)
  return Effect.logWarning("upstream attempt failed").pipe(Effect.annotateLogs({
    provider: observed.attempt.candidate.provider.slug,
    endpoint: id,
    reason: observed.error.reason._tag,
    error: UpstreamError.describe(observed.error.reason, observed.attempt.candidate.provider.slug),
    key: caller.keyHash.slice(0, 12)
  }))
}
