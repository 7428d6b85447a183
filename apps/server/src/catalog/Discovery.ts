import type * as Catalog from "@switchyard/core/catalog/Catalog"
import type * as DiscoveredModels from "@switchyard/core/catalog/DiscoveredModels"
import * as SelfHosted from "@switchyard/core/catalog/SelfHostedFields"
import type { EmbeddingProvider } from "@switchyard/core"
import { Clock, Duration, Effect, Layer, Option, Schedule } from "effect"
import { HttpClient } from "effect/http"
import { Adapters, connectionOf } from "../providers/Adapters.ts"
import { replicaUrlsOf } from "../providers/Replicas.ts"
import * as ServedModels from "../providers/ServedModels.ts"
import { serverOf } from "../providers/WireFormats.ts"
import { Discovered } from "./Discovered.ts"
import { LiveCatalog } from "./LiveCatalog.ts"

/** How long a listing or a probe of one replica may take. */
const callTimeout = Duration.seconds(5)

/** The text a model of unknown task or width is asked to embed (or rank) once: its answer tells. */
const probeText = "switchyard discovery probe"

const discovering = (provider: Catalog.Provider): boolean =>
  provider.enabled && provider.discover === true && serverOf(provider.adapter) !== undefined &&
  replicaUrlsOf(provider).length > 0

/**
 * Lists each discovering provider's models at start and every `discover_interval_s` (default 60),
 * from the first replica that answers, and swaps the catalog when they changed: a model the server
 * starts serving is routed within one interval, one it stops serving is dropped within one. A
 * model's task and width, when its listing does not give them, are learned from one answer (an
 * embedding of a short text, else a ranking of one document) and kept for the life of the process.
 * A server that answers no listing keeps the models last listed: its health probes hold it out.
 * Every replica runs its own discovery against the same servers, so all of them serve the same
 * models within an interval. The loop runs on the wall clock, as the health probes do.
 */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const live = yield* LiveCatalog
  const discovered = yield* Discovered
  const adapters = yield* Adapters
  const client = yield* HttpClient.HttpClient
  // What an answer taught about a model, by provider and server id.
  const learned = new Map<string, DiscoveredModels.ServedModel>()
  const lastListed = new Map<string, number>()

  const probe = (provider: Catalog.Provider, connection: EmbeddingProvider.Connection, listed: ServedModels.Listed) =>
    Effect.gen(function*() {
      const adapter = adapters[provider.adapter]
      const limits = {
        ...(listed.max_batch_items !== undefined ? { max_batch_items: listed.max_batch_items } : {}),
        ...(listed.max_input_tokens !== undefined ? { max_input_tokens: listed.max_input_tokens } : {})
      }
      if (listed.task === "rerank") return Option.some<DiscoveredModels.ServedModel>({ id: listed.id, task: "rerank", ...limits })
      const embedded = yield* adapter.embed(connection, {
        upstreamModel: listed.id,
        input: { _tag: "Texts", texts: [probeText] },
        encodingFormat: "float"
      }).pipe(Effect.timeout(callTimeout), Effect.option)
      const first = Option.isSome(embedded) ? embedded.value.embeddings[0]?.embedding : undefined
      if (Array.isArray(first) && first.length > 0) {
        return Option.some<DiscoveredModels.ServedModel>({ id: listed.id, task: "embeddings", dimensions: first.length, ...limits })
      }
      if (listed.task === undefined && adapter.rerank !== undefined) {
        const ranked = yield* adapter.rerank(connection, { upstreamModel: listed.id, query: probeText, documents: [{ text: probeText }] }).pipe(
          Effect.timeout(callTimeout),
          Effect.option
        )
        if (Option.isSome(ranked)) return Option.some<DiscoveredModels.ServedModel>({ id: listed.id, task: "rerank", ...limits })
      }
      return Option.none<DiscoveredModels.ServedModel>()
    })

  const learn = (provider: Catalog.Provider, connection: EmbeddingProvider.Connection, listed: ServedModels.Listed) => {
    const key = `${provider.slug}\u0000${listed.id}`
    const known = learned.get(key)
    if (known !== undefined) return Effect.succeed(Option.some(known))
    return probe(provider, connection, listed).pipe(
      Effect.tap((model) => Effect.sync(() => Option.isSome(model) && learned.set(key, model.value))),
      Effect.tap((model) =>
        Option.isNone(model)
          ? Effect.logDebug(`providers: ${provider.slug} lists ${listed.id}, which answered neither an embedding nor a ranking`)
          : Effect.void
      )
    )
  }

  const discover = (provider: Catalog.Provider) =>
    Effect.gen(function*() {
      const server = serverOf(provider.adapter)
      if (server === undefined) return false
      const apiKey = live.current().credentials.get(provider.slug)
      const failures: Array<string> = []
      for (const baseUrl of replicaUrlsOf(provider)) {
        // One replica's connection, as a call through the replicas makes it (Replicas.ts).
        const connection = { ...connectionOf(provider, apiKey), baseUrl }
        const listing = yield* ServedModels.list(client, server.listing, connection, callTimeout).pipe(Effect.result)
        if (listing._tag === "Failure") {
          failures.push(`${baseUrl}: ${listing.failure.reason}`)
          continue
        }
        const models = yield* Effect.forEach(listing.success, (listed) => learn(provider, connection, listed), { concurrency: 4 })
        return discovered.set(provider.slug, models.flatMap((m) => (Option.isSome(m) ? [m.value] : [])))
      }
      yield* Effect.logWarning(`providers: could not list the models of ${provider.slug} (kept the ones listed before)`, failures.join("; "))
      return false
    })

  const round = (force: boolean) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const due = live.current().catalog.providers.filter(discovering).filter((p) => {
        const last = lastListed.get(p.slug)
        return force || last === undefined || now - last >= (p.discover_interval_s ?? SelfHosted.defaultDiscoverIntervalS) * 1000
      })
      for (const p of due) lastListed.set(p.slug, now)
      const changed = yield* Effect.forEach(due, discover, { concurrency: "unbounded" })
      if (changed.some((c) => c)) yield* live.refresh
    })

  const onWallClock = Effect.provideService(Clock.Clock, Clock.Clock.defaultValue())
  // The first listing before the gateway serves, so a discovered model is there from the first request.
  yield* onWallClock(round(true))
  yield* round(false).pipe(
    Effect.catchCause((cause) => Effect.logWarning("providers: model discovery failed", cause)),
    Effect.repeat(Schedule.spaced("1 second")),
    onWallClock,
    Effect.forkScoped
  )
}))
