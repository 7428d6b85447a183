import type { CallerShape } from "@switchyard/core/api/Authorization"
import * as Cost from "@switchyard/core/catalog/Cost"
import type { EmbeddingsError, PreparationError } from "@switchyard/core/errors/EmbeddingsError"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import type * as RoutePlan from "@switchyard/core/routing/RoutePlan"
import type * as EmbeddingRequest from "@switchyard/core/schema/EmbeddingRequest"
import { Accounting } from "@switchyard/core/store/Accounting"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import { Clock, Config, Context, Effect, Layer } from "effect"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { Adapters } from "../providers/Adapters.ts"
import * as CachedEmbed from "../cache/CachedEmbed.ts"
import { EmbeddingCache } from "../cache/EmbeddingCache.ts"
import { GatewayMetrics } from "../observability/GatewayMetrics.ts"
import { EndpointHealth } from "./EndpointHealth.ts"
import * as Preparation from "./Preparation.ts"
import * as Settlement from "./Settlement.ts"
import * as UpstreamAttempt from "./UpstreamAttempt.ts"
import { Workspaces } from "./Workspaces.ts"
import { InFlight } from "../store/InFlight.ts"
import * as AttemptObserver from "../routing/AttemptObserver.ts"
import * as HeldAttempts from "../routing/HeldAttempts.ts"

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
 * plan's attempts, settle the actual cost. A request whose every item the cache holds for the
 * primary endpoint skips the hold and the attempts: its ledger row is recorded at cost 0.
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
      const attempt = UpstreamAttempt.make({
        adapters: yield* Adapters,
        loaded,
        cache: yield* EmbeddingCache,
        metrics: yield* GatewayMetrics,
        attemptTimeoutMs: config.attemptTimeoutMs,
        batchConcurrency: config.batchConcurrency
      })

      const observe = AttemptObserver.make(health, (value: CachedEmbed.CachedResult) => value.promptTokens)

      const create = Effect.fn("Embeddings.create")(function*(
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        options: Preparation.CallOptions
      ) {
        const startedAt = yield* Clock.currentTimeMillis
        const prepared = yield* prepare(caller, request, options)
        const attempts = attempt(request, prepared)
        // The primary endpoint's items are looked up before any hold: when the cache holds them
        // all, the request costs nothing and needs neither a hold nor an upstream call.
        // (A workspace without the cache, the default, reads nothing: no item is even hashed.)
        const primary = prepared.attempts[0]!
        const found = prepared.cachePolicy.read ? yield* attempts.lookup(primary) : undefined
        const whole = found === undefined ? undefined : CachedEmbed.whole(found, request.encoding_format ?? "float")
        if (whole !== undefined) {
          const latencyMs = (yield* Clock.currentTimeMillis) - startedAt
          const report: Fallback.AttemptReport = {
            endpoint: primary.candidate.id,
            provider: primary.candidate.provider.slug,
            outcome: "success",
            latency_ms: latencyMs,
            byok: primary.byok
          }
          return yield* Settlement.record(accounting, caller, request, prepared, { attempt: primary, value: whole, reports: [report] }, latencyMs)
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
          call: attempts.call(found === undefined ? undefined : { endpoint: primary.candidate.id, lookup: found }),
          observe: observe(caller),
          span: "Embeddings.attempt",
          timeoutMs: config.requestTimeoutMs
        })
        const latencyMs = (yield* Clock.currentTimeMillis) - startedAt
        return yield* Settlement.settle(accounting, reservation, request, prepared, outcome, latencyMs)
      })

      const dryRun = Effect.fn("Embeddings.dryRun")(function*(
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
      })

      // Counted until settled: the ledger batch waits a moment for the rows of requests in flight.
      return Embeddings.of({ create: (caller, request, options) => inFlight.track(create(caller, request, options)), dryRun })
    })
  )
}
