import type { CallerShape } from "@switchyard/core/api/Authorization"
import * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import * as Cost from "@switchyard/core/catalog/Cost"
import * as Money from "@switchyard/core/catalog/Money"
import type { EmbeddingProvider } from "@switchyard/core"
import * as EmbeddingRequest from "@switchyard/core/schema/EmbeddingRequest"
import { Effect } from "effect"
import * as Route from "../pipeline/Route.ts"
import * as UpstreamInput from "../providers/UpstreamInput.ts"
import { cacheEnabled } from "../pipeline/Workspaces.ts"

export interface CallOptions {
  /** Seed of the plan's random draw; random when absent. */
  readonly seed?: number | undefined
  /** The request's `x-switchyard-cache` directive; `default` when absent. */
  readonly cache?: CachePolicy.Directive | undefined
  /**
   * The generation id to settle under, instead of a fresh one: a batch line's, derived from its
   * batch and line so that a line run again is never charged twice (`settle` is idempotent on it).
   */
  readonly generationId?: string | undefined
  /**
   * Whether a request whose answer does not fit the memory held now waits until it does (a batch's
   * line) instead of being refused with 503 (a live request).
   */
  readonly waitForMemory?: boolean | undefined
}

/**
 * A request made ready to run: its route, the workspace's own credentials for the providers on
 * it, the catalog snapshot it was routed with (whose credentials its upstream calls use), the
 * normalised input, and the most it can cost.
 */
export interface Prepared extends Pick<Route.Route, "plan" | "attempts" | "own" | "snapshot"> {
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
export const make = (services: Route.Services) => {
  const route = Route.make(services)

  return Effect.fnUntraced(function*(caller: CallerShape, request: EmbeddingRequest.EmbeddingRequest, options: CallOptions) {
    const { plan, attempts, own, workspace, settings, snapshot } = yield* route(caller, {
      task: "embeddings",
      model: request.model,
      preferences: request.provider,
      sentParameters: EmbeddingRequest.sentParameters(request),
      inputModalities: EmbeddingRequest.inputModalities(request),
      dimensions: request.dimensions,
      seed: options.seed
    })
    const input = UpstreamInput.normalize(request.input)
    const bound = UpstreamInput.tokenBound(input)
    const worstAtto = Route.worstOf(plan, (endpoint) => Cost.compute(endpoint.pricing, { prompt_tokens: bound.tokens, images: bound.images }).total)
    return {
      plan,
      attempts,
      own,
      snapshot,
      input,
      bound,
      worstNanos: Money.toUnits(worstAtto, 9, "up"),
      workspaceId: caller.workspaceId,
      cachePolicy: CachePolicy.policy({
        enabled: cacheEnabled(snapshot.catalog, settings),
        directive: options.cache ?? "default",
        zdr: workspace.zdr || request.provider?.zdr === true
      })
    } satisfies Prepared
  })
}
