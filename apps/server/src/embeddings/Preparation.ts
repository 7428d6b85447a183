import type { CallerShape } from "@switchyard/core/api/Authorization"
import * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as Cost from "@switchyard/core/catalog/Cost"
import * as Money from "@switchyard/core/catalog/Money"
import type { EmbeddingProvider } from "@switchyard/core"
import * as RoutePlan from "@switchyard/core/routing/RoutePlan"
import * as EmbeddingRequest from "@switchyard/core/schema/EmbeddingRequest"
import type { ByokStore } from "@switchyard/core/store/ByokStore"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import { Clock, Effect, Option, type Redacted } from "effect"
import type { LoadedCatalog } from "../catalog/CatalogLoader.ts"
import type { EndpointHealth } from "./EndpointHealth.ts"
import * as RandomPool from "./RandomPool.ts"
import * as UpstreamInput from "./UpstreamInput.ts"
import { cacheEnabled, type Workspaces } from "./Workspaces.ts"

export interface CallOptions {
  /** Seed of the plan's random draw; random when absent. */
  readonly seed?: number | undefined
  /** The request's `x-switchyard-cache` directive; `default` when absent. */
  readonly cache?: CachePolicy.Directive | undefined
}

/**
 * A request made ready to run: its route, the workspace's own credentials for the providers on
 * it, the normalised input, and the most it can cost.
 */
export interface Prepared {
  readonly plan: RoutePlan.Plan
  /** The plan's attempts, each marked when the workspace's own credential pays for it. */
  readonly attempts: ReadonlyArray<Fallback.Attempt>
  readonly own: ReadonlyMap<string, Redacted.Redacted<string>>
  readonly input: EmbeddingProvider.EmbeddingInput
  readonly bound: { readonly tokens: number; readonly images: number }
  /** The plan's worst case, rounded up to nanos: what is held before any call. */
  readonly worstNanos: bigint
  /** The caller's workspace, whose cache entries the request may use. */
  readonly workspaceId: string
  /** Whether the request reads and writes the embeddings cache. */
  readonly cachePolicy: CachePolicy.Policy
}

/**
 * Plans a request: the workspace's name and credentials, the route, the worst case.
 */
export const make = (services: {
  readonly loaded: LoadedCatalog
  readonly health: EndpointHealth["Service"]
  readonly byok: ByokStore["Service"]
  readonly workspaces: Workspaces["Service"]
}) => {
  const { loaded, health, byok, workspaces } = services
  // The catalog is fixed for the life of the process: which providers serve a model is worked
  // out once, not by scanning every provider on every request.
  const serving = new Map<string, Array<(typeof loaded.catalog.providers)[number]>>()
  for (const provider of loaded.catalog.providers) {
    for (const model of new Set(provider.endpoints.map((e) => e.model.toLowerCase()))) {
      serving.set(model, [...(serving.get(model) ?? []), provider])
    }
  }
  const servingProviders = (model: string) => serving.get(model.toLowerCase()) ?? []

  return Effect.fnUntraced(function*(caller: CallerShape, request: EmbeddingRequest.EmbeddingRequest, options: CallOptions) {
    const now = yield* Clock.currentTimeMillis
    const settings = yield* workspaces.settingsOf(caller.workspaceId)
    const own = new Map<string, Redacted.Redacted<string>>()
    for (const provider of servingProviders(request.model)) {
      if (provider.adapter === "local") continue
      const credential = yield* byok.credentialFor(caller.workspaceId, provider.slug)
      if (Option.isSome(credential)) own.set(provider.slug, credential.value)
    }
    const seed = options.seed ?? RandomPool.uint32()
    const workspace = Catalog.workspace(loaded.catalog, settings.slug)
    const plan = yield* RoutePlan.plan({
      catalog: loaded.catalog,
      model: request.model,
      preferences: request.provider ?? null,
      workspace,
      sentParameters: EmbeddingRequest.sentParameters(request),
      inputModalities: EmbeddingRequest.inputModalities(request),
      isActive: (p) => loaded.active.has(p.slug) || own.has(p.slug),
      stats: health.stats(now),
      now,
      seed
    }).pipe(Effect.withSpan("RoutePlan.plan"))
    const input = UpstreamInput.normalize(request.input)
    const bound = UpstreamInput.tokenBound(input)
    const worstAtto = plan.attempts.reduce((max, c) => {
      const cost = Cost.compute(c.endpoint.pricing, { prompt_tokens: bound.tokens, images: bound.images }).total
      return cost > max ? cost : max
    }, 0n)
    return {
      plan,
      attempts: plan.attempts.map((candidate) => ({ candidate, byok: own.has(candidate.provider.slug) })),
      own,
      input,
      bound,
      worstNanos: Money.toUnits(worstAtto, 9, "up"),
      workspaceId: caller.workspaceId,
      cachePolicy: CachePolicy.policy({
        enabled: cacheEnabled(loaded.catalog, settings),
        directive: options.cache ?? "default",
        zdr: workspace.zdr || request.provider?.zdr === true
      })
    } satisfies Prepared
  })
}
