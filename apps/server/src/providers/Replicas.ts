import type { EmbeddingProvider } from "@switchyard/core"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import * as SelfHosted from "@switchyard/core/catalog/SelfHostedFields"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Context, Effect, Layer } from "effect"

/**
 * How long a replica that failed is held out of the order, as an endpoint's outage window
 * (`EndpointStats.recentlyFailed`): unless it answers a health probe before.
 */
export const outageWindowMs = 30_000

/** Latencies kept per replica for its p50. */
const keptLatencies = 64

/** A replica as `GET /api/v1/providers/{slug}` shows it. */
export interface ReplicaReport {
  readonly base_url: string
  readonly healthy: boolean
  readonly in_flight: number
  readonly p50_ms: number | null
}

// Failures that say this replica, not the request, is at fault: the next replica may answer.
const replicaFaults = new Set<UpstreamError.Reason["_tag"]>([
  "Timeout",
  "Overloaded",
  "Unavailable",
  "ServerError",
  "Unreachable",
  "ConnectionLost",
  "RateLimited",
  "InvalidResponse"
])

const isReplicaFault = (error: unknown): boolean =>
  error instanceof UpstreamError.UpstreamError && replicaFaults.has(error.reason._tag)

class Replica {
  inFlight = 0
  served = 0
  latencies: Array<number> = []
  failedAt: number | undefined = undefined
  probeDown = false
  readonly baseUrl: string
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl
  }

  p50(): number | undefined {
    if (this.latencies.length === 0) return undefined
    const sorted = [...this.latencies].sort((a, b) => a - b)
    const mid = sorted.length >> 1
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  }

  healthy(now: number): boolean {
    return !this.probeDown && (this.failedAt === undefined || now - this.failedAt >= outageWindowMs)
  }
}

/**
 * The servers a self-hosted provider reaches: its `base_urls`, or its one `base_url`. Each
 * replica's in-flight count, p50 latency and health live in this process.
 */
export const replicaUrlsOf = (provider: Catalog.Provider): ReadonlyArray<string> =>
  provider.base_urls ?? (SelfHosted.selfHostedAdapters.includes(provider.adapter) && provider.base_url !== undefined ? [provider.base_url] : [])

/**
 * The order one call tries replicas in: healthy ones first, least in flight, then lowest p50
 * (a replica with no answers yet counts as fastest, so a new one gets traffic), then fewest
 * served; held-out ones last, longest held first, tried only when every healthy one failed.
 */
const order = (replicas: ReadonlyArray<Replica>, now: number): Array<Replica> => {
  const healthy = replicas.filter((r) => r.healthy(now))
  const held = replicas.filter((r) => !r.healthy(now))
  healthy.sort((a, b) => a.inFlight - b.inFlight || (a.p50() ?? 0) - (b.p50() ?? 0) || a.served - b.served)
  held.sort((a, b) => (a.failedAt ?? 0) - (b.failedAt ?? 0))
  return [...healthy, ...held]
}

export class Replicas extends Context.Service<Replicas, {
  /**
   * Runs `call` against the provider's replicas (a provider without `base_urls` gets its own
   * connection): the best one first; when it fails in a way that is the replica's (`Timeout`,
   * 5xx, unreachable, 429...) it is held out and the next is tried, and the last failure is the
   * call's. Each try is `call` once, so the caller's time limit bounds each replica.
   */
  readonly through: <A, E>(
    provider: Catalog.Provider,
    connection: EmbeddingProvider.Connection,
    call: (connection: EmbeddingProvider.Connection) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E>
  /** The provider's replicas as the provider's answer shows them; empty for other adapters. */
  readonly report: (provider: Catalog.Provider, now: number) => ReadonlyArray<ReplicaReport>
  /** What a health probe of one replica found: down holds it out, up brings it back at once. */
  readonly probed: (provider: Catalog.Provider, baseUrl: string, healthy: boolean, at: number) => void
  /** Whether every replica of the provider is down by its probes or its last failure. */
  readonly allDown: (provider: Catalog.Provider, now: number) => boolean
}>()("@switchyard/server/providers/Replicas") {
  static readonly layer = Layer.sync(Replicas, () => {
    const states = new Map<string, Map<string, Replica>>()
    const replicasOf = (provider: Catalog.Provider): Array<Replica> => {
      let byUrl = states.get(provider.slug)
      if (byUrl === undefined) {
        byUrl = new Map()
        states.set(provider.slug, byUrl)
      }
      const urls = replicaUrlsOf(provider)
      // A catalog change may list other replicas: the ones still listed keep their state.
      for (const url of [...byUrl.keys()]) if (!urls.includes(url)) byUrl.delete(url)
      return urls.map((url) => {
        let replica = byUrl.get(url)
        if (replica === undefined) {
          replica = new Replica(url)
          byUrl.set(url, replica)
        }
        return replica
      })
    }

    const tryOne = <A, E>(
      replica: Replica,
      connection: EmbeddingProvider.Connection,
      call: (connection: EmbeddingProvider.Connection) => Effect.Effect<A, E>
    ) =>
      Effect.flatMap(Clock.currentTimeMillis, (startedAt) => {
        replica.inFlight += 1
        replica.served += 1
        return call({ ...connection, baseUrl: replica.baseUrl }).pipe(
          Effect.tap(() =>
            Effect.map(Clock.currentTimeMillis, (now) => {
              replica.latencies.push(now - startedAt)
              if (replica.latencies.length > keptLatencies) replica.latencies.shift()
              replica.failedAt = undefined
            })
          ),
          Effect.tapError((error) =>
            isReplicaFault(error)
              ? Effect.map(Clock.currentTimeMillis, (now) => {
                replica.failedAt = now
              })
              : Effect.void
          ),
          Effect.ensuring(Effect.sync(() => {
            replica.inFlight -= 1
          }))
        )
      })

    const through = <A, E>(
      provider: Catalog.Provider,
      connection: EmbeddingProvider.Connection,
      call: (connection: EmbeddingProvider.Connection) => Effect.Effect<A, E>
    ): Effect.Effect<A, E> => {
      if (provider.base_urls === undefined && !SelfHosted.selfHostedAdapters.includes(provider.adapter)) return call(connection)
      const replicas = replicasOf(provider)
      if (replicas.length === 0) return call(connection)
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const ordered = order(replicas, now)
        const from = (i: number): Effect.Effect<A, E> =>
          tryOne(ordered[i]!, connection, call).pipe(
            Effect.catch((error: E) => i + 1 < ordered.length && isReplicaFault(error) ? from(i + 1) : Effect.fail(error))
          )
        return from(0)
      })
    }

    return Replicas.of({
      through,
      report: (provider, now) =>
        replicasOf(provider).map((r) => {
          const p50 = r.p50()
          return { base_url: r.baseUrl, healthy: r.healthy(now), in_flight: r.inFlight, p50_ms: p50 === undefined ? null : Math.round(p50) }
        }),
      probed: (provider, baseUrl, healthy, at) => {
        const replica = replicasOf(provider).find((r) => r.baseUrl === baseUrl)
        if (replica === undefined) return
        replica.probeDown = !healthy
        if (healthy) replica.failedAt = undefined
        else replica.failedAt = at
      },
      allDown: (provider, now) => {
        const replicas = replicasOf(provider)
        return replicas.length > 0 && replicas.every((r) => !r.healthy(now))
      }
    })
  })
}
