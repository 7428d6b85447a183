import type { CallerShape } from "@switchyard/core/api/Authorization"
import * as Cost from "@switchyard/core/catalog/Cost"
import type { EmbeddingsError, PreparationError } from "@switchyard/core/errors/EmbeddingsError"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import type * as RoutePlan from "@switchyard/core/routing/RoutePlan"
import type * as EmbeddingRequest from "@switchyard/core/schema/EmbeddingRequest"
import { Accounting } from "@switchyard/core/store/Accounting"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import { Clock, Config, Context, Effect, Exit, Layer } from "effect"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { Adapters } from "../providers/Adapters.ts"
import * as CachedEmbed from "../cache/CachedEmbed.ts"
import { EmbeddingCache } from "../cache/EmbeddingCache.ts"
import { GatewayMetrics } from "../observability/GatewayMetrics.ts"
import * as RequestFacts from "../observability/RequestFacts.ts"
import { EndpointHealth } from "./EndpointHealth.ts"
import * as Preparation from "./Preparation.ts"
import * as Settlement from "./Settlement.ts"
import * as UpstreamAttempt from "./UpstreamAttempt.ts"
import * as UpstreamInput from "./UpstreamInput.ts"
import { Workspaces } from "./Workspaces.ts"
import { InFlight } from "../store/InFlight.ts"
import * as AttemptObserver from "../routing/AttemptObserver.ts"
import * as HeldAttempts from "../routing/HeldAttempts.ts"
import * as Span from "../observability/Span.ts"

export type { CallOptions } from "./Preparation.ts"
export type { AttemptReport, Served, VectorSpaceChange } from "./Settlement.ts"
export { generationId } from "./Settlement.ts"

export interface DryRun {
  readonly plan: RoutePlan.Plan
  readonly estimatedPromptTokens: number
  readonly estimatedCostNanos: bigint
}

export const EmbeddingsConfig = Config.all({
  requestTimeoutMs: Config.Int("SWITCHYARD_REQUEST_TIMEOUT_MS").pipe(Config.withDefault(120_000)),
  attemptTimeoutMs: Config.Int("SWITCHYARD_ATTEMPT_TIMEOUT_MS").pipe(Config.withDefault(15_000)),
  batchConcurrency: Config.Int("SWITCHYARD_BATCH_CONCURRENCY").pipe(Config.withDefault(4))
})

/**
 * Embeddings end to end: prepare (plan the route, find the worst case), reserve it, run the
 * plan's attempts, settle the actual cost. A request whose every item the cache holds for one
 * endpoint of the plan skips the hold and the attempts: its ledger row is recorded at cost 0,
 * credited to that endpoint.
 * Failures are facts (`EmbeddingsError`); the route gives them their status.
 */
export class Embeddings extends Context.Service<Embeddings, {
  readonly create: (
    caller: CallerShape,
    request: EmbeddingRequest.EmbeddingRequest,
    options: Preparation.CallOptions
  ) => Effect.Effect<Settlement.Served, EmbeddingsError>
  readonly dryRun: (
    caller: CallerShape,
    request: EmbeddingRequest.EmbeddingRequest,
    options: Preparation.CallOptions
  ) => Effect.Effect<DryRun, PreparationError | StoreUnavailable>
}>()("@switchyard/server/embeddings/Embeddings") {
  static readonly layer = Layer.effect(
    Embeddings,
    Effect.gen(function*() {
      const loaded = yield* CurrentCatalog
      const health = yield* EndpointHealth
      const accounting = yield* Accounting
      const inFlight = yield* InFlight
      const config = yield* EmbeddingsConfig
      const prepare = Preparation.make({ loaded, health, byok: yield* ByokStore, workspaces: yield* Workspaces })
      const metrics = yield* GatewayMetrics
      const attempt = UpstreamAttempt.make({
        adapters: yield* Adapters,
        loaded,
        cache: yield* EmbeddingCache,
        metrics,
        batchConcurrency: config.batchConcurrency
      })

      const observe = AttemptObserver.make(health, (value: CachedEmbed.CachedResult) => value.promptTokens)

      const serve = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        prepared: Preparation.Prepared,
        startedAt: number,
        givenId: string | undefined
      ) {
        const attempts = attempt(request, prepared)
        // Every endpoint of the plan is looked up before any hold, in one read: when the cache
        // holds all the items of one endpoint (the first such in plan order), the request costs
        // nothing and needs neither a hold nor an upstream call, and that endpoint is credited.
        // (A workspace without the cache, the default, reads nothing: no item is even hashed.)
        const found = prepared.cachePolicy.read ? yield* attempts.lookup(prepared.attempts) : undefined
        const encoding = request.encoding_format ?? "float"
        const served = found === undefined ? undefined : CachedEmbed.firstWhole(prepared.attempts, found, encoding)
        if (served !== undefined) {
          const latencyMs = (yield* Clock.currentTimeMillis) - startedAt
          // No upstream took part: the answer has no attempt.
          return yield* Settlement.record(accounting, caller, request, prepared, { ...served, reports: [] }, latencyMs, givenId)
        }
        const reservation = yield* accounting.reserve({
          keyId: caller.keyId,
          workspaceId: caller.workspaceId,
          amountNanos: prepared.worstNanos,
          byok: prepared.attempts.every((a) => a.byok)
        })
        const outcome = yield* HeldAttempts.run({
          accounting,
          reservation,
          attempts: prepared.attempts,
          call: attempts.call(found),
          observe: observe(caller),
          span: "Embeddings.attempt",
          tokensOf: (value) => value.promptTokens,
          timeoutMs: config.requestTimeoutMs,
          attemptTimeoutMs: config.attemptTimeoutMs
        })
        const latencyMs = (yield* Clock.currentTimeMillis) - startedAt
        return yield* Settlement.settle(accounting, reservation, request, prepared, outcome, latencyMs, givenId)
      })

      // What the cache did for a request, counted once whatever number of endpoints it was looked
      // up at or tried: each item a hit when the answer came from the cache, else a miss (a request
      // that does not read the cache counts nothing), and the cache's outcome noted for the
      // access line.
      const counted = (prepared: Preparation.Prepared, exit: Exit.Exit<Settlement.Served, unknown>) => {
        const items = UpstreamInput.count(prepared.input)
        const cache = Exit.isSuccess(exit)
          ? exit.value.cache
          : { outcome: CachePolicy.outcome(prepared.cachePolicy, items, 0), items: 0, bytes: 0 }
        if (prepared.cachePolicy.read) {
          metrics.cacheRead({ model: prepared.plan.model, hits: cache.items, misses: items - cache.items, bytes: cache.bytes })
        }
        return RequestFacts.note({ cache: cache.outcome })
      }

      const create = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        options: Preparation.CallOptions
      ) {
        const startedAt = yield* Clock.currentTimeMillis
        const prepared = yield* prepare(caller, request, options)
        return yield* serve(caller, request, prepared, startedAt, options.generationId).pipe(Effect.onExit((exit) => counted(prepared, exit)))
      }, Span.within("Embeddings.create"))

      const dryRun = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        options: Preparation.CallOptions
      ) {
        const prepared = yield* prepare(caller, request, options)
        const primary = prepared.plan.attempts[0]!
        const estimate = Cost.compute(primary.endpoint.pricing, {
          prompt_tokens: prepared.bound.tokens,
          images: prepared.bound.images
        }).total
        return {
          plan: prepared.plan,
          estimatedPromptTokens: prepared.bound.tokens,
          estimatedCostNanos: Settlement.nanosOf(estimate)
        } satisfies DryRun
      }, Span.within("Embeddings.dryRun"))

      // Counted until settled: the ledger batch waits a moment for the rows of requests in flight.
      return Embeddings.of({ create: (caller, request, options) => inFlight.track(create(caller, request, options)), dryRun })
    })
  )
}
