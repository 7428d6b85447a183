import { inProcess } from "@switchyard/core/adapters/Registry"
import type { CallerShape } from "@switchyard/core/api/Authorization"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import type * as Cost from "@switchyard/core/catalog/Cost"
import * as ModelName from "@switchyard/core/catalog/ModelName"
import * as EndpointParameters from "@switchyard/core/routing/EndpointParameters"
import * as RoutePlan from "@switchyard/core/routing/RoutePlan"
import type { InputModality } from "@switchyard/core/schema/EmbeddingRequest"
import type { ProviderPreferences } from "@switchyard/core/schema/ProviderPreferences"
import type { ByokStore } from "@switchyard/core/store/ByokStore"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import { Clock, Effect, Option, type Redacted } from "effect"
import type { LoadedCatalog } from "../catalog/CatalogLoader.ts"
import type { EndpointHealth } from "./EndpointHealth.ts"
import * as RandomPool from "./RandomPool.ts"
import { routingOf, type Workspaces } from "./Workspaces.ts"
import * as Span from "../instrumentation/Span.ts"
import { connectionOf } from "../providers/Adapters.ts"

/**
 * What routing needs of a request, whatever its task.
 */
export interface RouteQuery {
  readonly task: Catalog.Task
  readonly model: string
  readonly preferences: ProviderPreferences | null | undefined
  readonly sentParameters: ReadonlyArray<string>
  readonly inputModalities: ReadonlyArray<InputModality>
  /** Seed of the plan's random draw; random when absent. */
  readonly seed: number | undefined
  /** What the request is expected to consume, when endpoints are priced in different units. */
  readonly consumption?: Cost.Consumption | undefined
  /** The width the request asks for (`dimensions`), if any. */
  readonly dimensions?: number | undefined
}

/**
 * A request's route: the plan, its attempts marked where the workspace's own credential pays,
 * those credentials, and the workspace's settings the plan applied.
 */
export interface Route {
  readonly plan: RoutePlan.Plan
  readonly attempts: ReadonlyArray<Fallback.Attempt>
  readonly own: ReadonlyMap<string, Redacted.Redacted<string>>
  readonly workspace: Catalog.Workspace
  readonly settings: Effect.Success<ReturnType<Workspaces["Service"]["settingsOf"]>>
  /** The catalog the plan was made from: the request's attempts use its credentials to the end. */
  readonly snapshot: LoadedCatalog
}

/**
 * What routing reads: the catalog, the endpoints' health, the workspaces' own credentials and
 * settings.
 */
export interface Services {
  readonly loaded: LoadedCatalog
  readonly health: EndpointHealth["Service"]
  readonly byok: ByokStore["Service"]
  readonly workspaces: Workspaces["Service"]
}

/**
 * Routes a caller's request, embeddings or rerank alike: the workspace's settings and own
 * credentials for the providers serving the model, then core's plan with the live statistics.
 */
export const make = (services: Services) => {
  const { loaded, health, byok, workspaces } = services
  // Which providers serve a model is worked out once per catalog snapshot (the catalog changes
  // only when providers are managed at runtime), not by scanning every provider on every request.
  let indexed: { readonly catalog: Catalog.Catalog; readonly serving: ReadonlyMap<string, ReadonlyArray<Catalog.Provider>> } | undefined
  const servingIn = (catalog: Catalog.Catalog) => {
    if (indexed?.catalog === catalog) return indexed.serving
    const serving = new Map<string, Array<Catalog.Provider>>()
    for (const provider of catalog.providers) {
      for (const model of new Set(provider.endpoints.map((e) => e.model.toLowerCase()))) {
        serving.set(model, [...(serving.get(model) ?? []), provider])
      }
    }
    indexed = { catalog, serving }
    return serving
  }

  return Effect.fnUntraced(function*(caller: CallerShape, query: RouteQuery) {
    // One snapshot for the whole request, read at once (the live catalog may swap meanwhile).
    const snapshot: LoadedCatalog = { catalog: loaded.catalog, credentials: loaded.credentials, active: loaded.active }
    const now = yield* Clock.currentTimeMillis
    const settings = yield* workspaces.settingsOf(caller.workspaceId)
    const own = new Map<string, Redacted.Redacted<string>>()
    for (const provider of servingIn(snapshot.catalog).get(query.model.toLowerCase()) ?? []) {
      if (inProcess(provider.adapter)) continue
      const credential = yield* byok.credentialFor(caller.workspaceId, provider.slug)
      if (Option.isSome(credential)) own.set(provider.slug, credential.value)
    }
    const workspace = routingOf(snapshot.catalog, settings)
    const plan = yield* RoutePlan.plan({
      catalog: snapshot.catalog,
      model: query.model,
      task: query.task,
      consumption: query.consumption,
      preferences: query.preferences ?? null,
      workspace,
      sentParameters: query.sentParameters,
      inputModalities: query.inputModalities,
      dimensions: query.dimensions,
      isActive: (p) => p.enabled && (snapshot.active.has(p.slug) || own.has(p.slug)),
      stats: (id) => health.statsOf(id, now),
      now,
      seed: query.seed ?? RandomPool.uint32()
    }).pipe(Span.within("RoutePlan.plan"))
    return {
      plan,
      attempts: plan.attempts.map((candidate) => ({ candidate, byok: own.has(candidate.provider.slug) })),
      own,
      workspace,
      settings,
      snapshot
    } satisfies Route
  })
}

/**
 * The most a request can cost on any endpoint of its plan, given what it would cost at one: what is
 * held before any call.
 */
export const worstOf = (plan: RoutePlan.Plan, costAt: (endpoint: Catalog.Endpoint) => bigint): bigint =>
  plan.attempts.reduce((max, c) => {
    const cost = costAt(c.endpoint)
    return cost > max ? cost : max
  }, 0n)

/** An attempt's time limit at `provider`: the provider's own, else `defaultTimeoutMs`. */
export const attemptLimitMs = (provider: Catalog.Provider, defaultTimeoutMs: number) => provider.timeout_ms ?? defaultTimeoutMs

/**
 * How an attempt reaches its provider: with the workspace's own credential where the route found
 * one, else the gateway's as the request's snapshot holds it. A key rotated while the request is
 * under way is used from the next request on; this one finishes on the credentials it was routed
 * with, never the live ones.
 */
export const connectionFor = (route: Pick<Route, "own" | "snapshot">, provider: Catalog.Provider) =>
  connectionOf(provider, route.own.get(provider.slug) ?? route.snapshot.credentials.get(provider.slug))

/**
 * The request with its model named in full: a model named without its vendor becomes the one
 * served model of that name.
 */
export const resolveModel = (loaded: LoadedCatalog) => <P extends { readonly model: string }>(payload: P) =>
  Effect.fromResult(ModelName.resolve(loaded.catalog, payload.model, (p) => loaded.active.has(p.slug))).pipe(
    Effect.map((model) => (model === payload.model ? payload : { ...payload, model }))
  )

/**
 * The parameters the request sent that neither the serving endpoint nor the gateway honoured,
 * which were left out (`require_parameters` off): `EndpointParameters.ignored`.
 */
export const ignoredParameters = (plan: RoutePlan.Plan, endpointId: string, sent: ReadonlyArray<string>) => {
  const endpoint = plan.attempts.find((c) => c.id === endpointId)?.endpoint
  return endpoint === undefined ? [] : EndpointParameters.ignored(sent, endpoint)
}

/**
 * The route of a plan as the answer reports it: the explanation and the attempts' ids.
 */
export const report = (plan: RoutePlan.Plan) => ({ ...plan.explanation, attempts: plan.attempts.map((c) => c.id) })
