import type { AdapterId } from "@switchyard/core/adapters/Registry"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import * as SelfHosted from "@switchyard/core/catalog/SelfHostedFields"
import { endpointId } from "@switchyard/core/routing/Candidates"
import { Clock, Context, Duration, Effect, Layer, Redacted, Schedule } from "effect"
import { HttpClient } from "effect/http"
import { LiveCatalog } from "../catalog/LiveCatalog.ts"
import { EndpointHealth } from "./EndpointHealth.ts"
import { Replicas, replicaUrlsOf } from "../providers/Replicas.ts"
import { serverGet } from "../providers/UpstreamHttp.ts"
import { serverOf } from "../providers/WireFormats.ts"

/**
 * The route each server answers when it is up, from its wire formats (`providers/WireFormats.ts`):
 * TEI's, Infinity's and vLLM's `GET /health`, Ollama's `GET /api/version`.
 */
export const healthPathOf = (adapter: AdapterId): string => serverOf(adapter)?.healthPath ?? "/health"

/** How long one probe may take: half its interval, at most 2 s. */
const probeTimeoutMs = (intervalS: number): number => Math.min(2_000, (intervalS * 1000) / 2)

/** One probe of one replica: whether it answered 2xx within `timeoutMs`. Never fails. */
export type Probe = (provider: Catalog.Provider, baseUrl: string, timeoutMs: number) => Effect.Effect<boolean>

/**
 * A probe over HTTP, with the provider's key and headers as its requests carry them (a server run
 * with `--api-key` may guard its health route too).
 */
export const httpProbe = (client: HttpClient.HttpClient, credentialOf: (slug: string) => Redacted.Redacted<string> | undefined): Probe =>
(provider, baseUrl, timeoutMs) => {
  const connection = { baseUrl, apiKey: credentialOf(provider.slug), ...(provider.headers ? { headers: provider.headers } : {}) }
  const request = serverGet(connection, healthPathOf(provider.adapter))
  return client.execute(request).pipe(
    Effect.map((response) => response.status >= 200 && response.status < 300),
    Effect.timeoutOrElse({ duration: Duration.millis(timeoutMs), orElse: () => Effect.succeed(false) }),
    Effect.catchCause(() => Effect.succeed(false))
  )
}

const selfHosted = (provider: Catalog.Provider) =>
  provider.enabled && SelfHosted.selfHostedAdapters.includes(provider.adapter) && replicaUrlsOf(provider).length > 0

/**
 * Probes every self-hosted provider's replicas, each provider every `health_interval_s` (default
 * 5), checked once a second: a replica that does not answer is held out of the replica order
 * (providers/Replicas.ts) before a request meets it, and back at the first probe it answers. When every
 * replica of a provider is down, its endpoints are marked failed (EndpointHealth), so routing
 * puts them behind every other endpoint as it does after a failed request, and the first probe
 * that finds one up ends that.
 */
export const make = (options: {
  readonly providers: () => ReadonlyArray<Catalog.Provider>
  readonly replicas: Replicas["Service"]
  readonly health: EndpointHealth["Service"]
  readonly probe: Probe
}): { readonly loop: Effect.Effect<never>; readonly probeAll: Effect.Effect<void> } => {
  const lastProbe = new Map<string, number>()
  const down = new Set<string>()
  const probeProvider = (provider: Catalog.Provider) =>
    Effect.gen(function*() {
      const intervalS = provider.health_interval_s ?? SelfHosted.defaultHealthIntervalS
      const urls = replicaUrlsOf(provider)
      const found = yield* Effect.forEach(urls, (url) => options.probe(provider, url, probeTimeoutMs(intervalS)), { concurrency: "unbounded" })
      const at = yield* Clock.currentTimeMillis
      for (const [i, url] of urls.entries()) options.replicas.probed(provider, url, found[i]!, at)
      const ids = provider.endpoints.map((e) => endpointId(provider, e))
      if (found.every((up) => !up)) {
        down.add(provider.slug)
        for (const id of ids) options.health.failure(id, at)
      } else if (down.delete(provider.slug)) {
        for (const id of ids) options.health.recovered(id, at)
      }
    })
  const tick = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const due = options.providers().filter((p) => {
      if (!selfHosted(p)) return false
      const last = lastProbe.get(p.slug)
      return last === undefined || now - last >= (p.health_interval_s ?? SelfHosted.defaultHealthIntervalS) * 1000
    })
    for (const p of due) lastProbe.set(p.slug, now)
    yield* Effect.forEach(due, probeProvider, { concurrency: "unbounded", discard: true })
  })
  return {
    loop: tick.pipe(Effect.repeat(Schedule.spaced("1 second")), Effect.andThen(Effect.never)),
    probeAll: Effect.forEach(options.providers().filter(selfHosted), probeProvider, { concurrency: "unbounded", discard: true })
  }
}

/**
 * The probes of the live catalog's self-hosted providers, in the background for the life of the
 * server. They run on the wall clock, as the catalog's poll does: a test that moves the
 * gateway's clock by a day must not make them probe 86,400 times.
 */
export class HealthProbes extends Context.Service<HealthProbes, {
  /** Probes every self-hosted provider now, whatever its interval. */
  readonly probeAll: Effect.Effect<void>
}>()("@switchyard/server/pipeline/HealthProbes") {
  static readonly layer = Layer.effect(
    HealthProbes,
    Effect.gen(function*() {
      const live = yield* LiveCatalog
      const client = yield* HttpClient.HttpClient
      const probes = make({
        providers: () => live.current().catalog.providers,
        replicas: yield* Replicas,
        health: yield* EndpointHealth,
        probe: httpProbe(client, (slug) => live.current().credentials.get(slug))
      })
      yield* probes.loop.pipe(Effect.provideService(Clock.Clock, Clock.Clock.defaultValue()), Effect.forkScoped)
      return HealthProbes.of({ probeAll: probes.probeAll })
    })
  )
}
