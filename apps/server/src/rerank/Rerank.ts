import type { CallerShape } from "@switchyard/core/api/Authorization"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as Cost from "@switchyard/core/catalog/Cost"
import * as Money from "@switchyard/core/catalog/Money"
import * as SearchUnits from "@switchyard/core/catalog/SearchUnits"
import type { EmbeddingsError, PreparationError } from "@switchyard/core/errors/EmbeddingsError"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import type * as RerankProvider from "@switchyard/core/providers/RerankProvider"
import type * as RoutePlan from "@switchyard/core/routing/RoutePlan"
import * as RerankRequest from "@switchyard/core/schema/RerankRequest"
import { Accounting } from "@switchyard/core/store/Accounting"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Context, Effect, Layer } from "effect"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { EmbeddingsConfig } from "../embeddings/Embeddings.ts"
import { EndpointHealth } from "../embeddings/EndpointHealth.ts"
import { nanosOf } from "../embeddings/Settlement.ts"
import * as RandomPool from "../embeddings/RandomPool.ts"
import { Workspaces } from "../embeddings/Workspaces.ts"
import { Adapters, scrub } from "../providers/Adapters.ts"
import * as TokenEstimate from "../providers/TokenEstimate.ts"
import * as AttemptObserver from "../routing/AttemptObserver.ts"
import * as Route from "../routing/Route.ts"
import { InFlight } from "../store/InFlight.ts"
import * as HeldAttempts from "../routing/HeldAttempts.ts"

/**
 * A rerank request served and settled: the scores best first (cut to `top_n`), what was billed,
 * and the route it took.
 */
export interface Reranked {
  readonly id: string
  readonly model: string
  readonly provider: string
  readonly endpoint: string
  readonly results: ReadonlyArray<RerankProvider.Score>
  readonly searchUnits: number
  readonly totalTokens: number
  readonly costNanos: bigint
  readonly isByok: boolean
  readonly plan: RoutePlan.Plan
  readonly attempts: ReadonlyArray<Fallback.AttemptReport>
}

/** What one endpoint billed for the whole request, its calls added up. */
interface Billed {
  readonly scores: ReadonlyArray<RerankProvider.Score>
  readonly searchUnits: number
  readonly totalTokens: number
}

const byteTokens = (text: string) => Buffer.byteLength(text, "utf8")

/** The documents' positions cut into the endpoint's calls. */
const calls = (documents: number, size: number): ReadonlyArray<{ readonly start: number; readonly end: number }> => {
  const out: Array<{ start: number; end: number }> = []
  for (let start = 0; start < documents; start += size) out.push({ start, end: Math.min(documents, start + size) })
  return out
}

/**
 * The most a request can cost at one endpoint: UTF-8 bytes bound tokens from above, so the
 * search units and tokens counted on bytes bound what any provider bills.
 */
export const worstCase = (endpoint: Catalog.Endpoint, query: string, documents: ReadonlyArray<string>): bigint => {
  const queryBound = byteTokens(query)
  let searchUnits = 0
  let tokens = 0
  for (const { start, end } of calls(documents.length, Catalog.batchSizeOf(endpoint))) {
    const bounds = documents.slice(start, end).map(byteTokens)
    searchUnits += SearchUnits.ofCall(queryBound, bounds)
    tokens += SearchUnits.tokensOfCall(queryBound, bounds)
  }
  return Cost.compute(endpoint.pricing, { prompt_tokens: tokens, search_units: searchUnits }).total
}

/** Scores best first; equal scores keep the documents' order. */
export const ranked = (scores: ReadonlyArray<RerankProvider.Score>, topN: number | undefined) => {
  const sorted = [...scores].sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
  return topN === undefined ? sorted : sorted.slice(0, topN)
}

/** A fresh generation id: the time it was made and random bits. */
const generationId = Effect.map(Clock.currentTimeMillis, (ms) => `gen-rr-${ms.toString(36)}-${RandomPool.base64url(9)}`)

/**
 * Rerank end to end on the embeddings machinery: the route (same preferences, workspace rules,
 * BYOK and health), a hold of the worst case, the attempts with fallback, each one split into
 * calls of the endpoint's `max_documents` and merged by index, and one ledger row at the billed
 * cost.
 */
export class Rerank extends Context.Service<Rerank, {
  readonly create: (
    caller: CallerShape,
    request: RerankRequest.RerankRequest,
    options: { readonly seed?: number | undefined }
  ) => Effect.Effect<Reranked, EmbeddingsError>
  /** The route and the most the request can cost on its first endpoint; no provider is called. */
  readonly dryRun: (
    caller: CallerShape,
    request: RerankRequest.RerankRequest,
    options: { readonly seed?: number | undefined }
  ) => Effect.Effect<{ readonly plan: RoutePlan.Plan; readonly tokenBound: number; readonly worstNanos: bigint }, PreparationError | StoreUnavailable>
}>()("@switchyard/server/rerank/Rerank") {
  static readonly layer = Layer.effect(
    Rerank,
    Effect.gen(function*() {
      const loaded = yield* CurrentCatalog
      const health = yield* EndpointHealth
      const accounting = yield* Accounting
      const adapters = yield* Adapters
      const inFlight = yield* InFlight
      const config = yield* EmbeddingsConfig
      const route = Route.make({ loaded, health, byok: yield* ByokStore, workspaces: yield* Workspaces })
      const observe = AttemptObserver.make(health, (billed: Billed) => billed.totalTokens)

      const call = (request: RerankRequest.RerankRequest, documents: ReadonlyArray<string>, own: Route.Route["own"]) =>
      ({ candidate }: Fallback.Attempt): Effect.Effect<Billed, UpstreamError.UpstreamError> => {
        const { provider, endpoint } = candidate
        const rerank = adapters[provider.adapter].rerank
        if (rerank === undefined) return Effect.fail(UpstreamError.unsupportedInput(`adapter ${provider.adapter} has no rerank API`))
        const connection = Route.connectionFor({ own }, loaded, provider, config.attemptTimeoutMs)
        const maxTokensPerDoc = request.max_tokens_per_doc !== undefined && endpoint.supported_parameters.includes("max_tokens_per_doc")
          ? request.max_tokens_per_doc
          : undefined
        const queryTokens = TokenEstimate.ofText(request.query)
        return Effect.forEach(calls(documents.length, Catalog.batchSizeOf(endpoint)), ({ start, end }) => {
          const part = documents.slice(start, end)
          return rerank(connection, {
            upstreamModel: endpoint.upstream_model,
            query: request.query,
            documents: part,
            ...(maxTokensPerDoc !== undefined ? { maxTokensPerDoc } : {})
          }).pipe(Effect.map((result): Billed => {
            // A provider that reports no usage is billed on the gateway's own count.
            const estimated = part.map(TokenEstimate.ofText)
            return {
              scores: result.scores.map((s) => ({ index: s.index + start, relevance_score: s.relevance_score })),
              searchUnits: result.searchUnits ?? SearchUnits.ofCall(queryTokens, estimated),
              totalTokens: result.totalTokens ?? SearchUnits.tokensOfCall(queryTokens, estimated)
            }
          }))
        }, { concurrency: config.batchConcurrency }).pipe(
          Effect.map((parts): Billed => ({
            scores: parts.flatMap((p) => p.scores),
            searchUnits: parts.reduce((n, p) => n + p.searchUnits, 0),
            totalTokens: parts.reduce((n, p) => n + p.totalTokens, 0)
          })),
          Effect.mapError((error) => scrub(error, connection))
        )
      }

      // The route, and what the request can cost at most on any endpoint of it.
      const prepare = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: RerankRequest.RerankRequest,
        options: { readonly seed?: number | undefined }
      ) {
        const documents = RerankRequest.texts(request)
        const queryTokens = TokenEstimate.ofText(request.query)
        const documentTokens = documents.map(TokenEstimate.ofText)
        const routed = yield* route(caller, {
          task: "rerank",
          model: request.model,
          preferences: request.provider,
          sentParameters: RerankRequest.sentParameters(request),
          inputModalities: ["text"],
          seed: options.seed,
          // Per-token and per-search prices compare by what this request would cost.
          consumption: {
            prompt_tokens: SearchUnits.tokensOfCall(queryTokens, documentTokens),
            search_units: SearchUnits.ofCall(queryTokens, documentTokens)
          }
        })
        const worstAtto = routed.plan.attempts.reduce((max, c) => {
          const cost = worstCase(c.endpoint, request.query, documents)
          return cost > max ? cost : max
        }, 0n)
        return { routed, documents, worstAtto }
      })

      const create = Effect.fn("Rerank.create")(function*(
        caller: CallerShape,
        request: RerankRequest.RerankRequest,
        options: { readonly seed?: number | undefined }
      ) {
        const startedAt = yield* Clock.currentTimeMillis
        const { routed, documents, worstAtto } = yield* prepare(caller, request, options)
        const reservation = yield* accounting.reserve({
          keyId: caller.keyId,
          workspaceId: caller.workspaceId,
          amountNanos: Money.toUnits(worstAtto, 9, "up"),
          byok: routed.attempts.every((a) => a.byok)
        })
        const outcome = yield* HeldAttempts.run({
          accounting,
          reservation,
          attempts: routed.attempts,
          call: call(request, documents, routed.own),
          observe: observe(caller),
          span: "Rerank.attempt",
          timeoutMs: config.requestTimeoutMs
        })
        const { attempt: { candidate, byok: isByok }, value: billed } = outcome
        const upstreamAtto = Cost.compute(candidate.endpoint.pricing, {
          prompt_tokens: billed.totalTokens,
          search_units: billed.searchUnits
        }).total
        const id = yield* generationId
        const latencyMs = (yield* Clock.currentTimeMillis) - startedAt
        const settlement = yield* accounting.settle(reservation, {
          generationId: id,
          model: candidate.endpoint.model,
          provider: candidate.provider.slug,
          promptTokens: billed.totalTokens,
          totalTokens: billed.totalTokens,
          costNanos: nanosOf(upstreamAtto),
          isByok,
          latencyMs
        })
        return {
          id,
          model: candidate.endpoint.model,
          provider: candidate.provider.slug,
          endpoint: candidate.id,
          results: ranked(billed.scores, request.top_n),
          searchUnits: billed.searchUnits,
          totalTokens: billed.totalTokens,
          costNanos: settlement.costNanos,
          isByok,
          plan: routed.plan,
          attempts: outcome.reports
        } satisfies Reranked
      })

      // Counted until settled: the ledger batch waits a moment for the rows of requests in flight.
      const dryRun = Effect.fn("Rerank.dryRun")(function*(
        caller: CallerShape,
        request: RerankRequest.RerankRequest,
        options: { readonly seed?: number | undefined }
      ) {
        const { routed, documents } = yield* prepare(caller, request, options)
        const primary = routed.plan.attempts[0]!
        const queryBound = byteTokens(request.query)
        return {
          plan: routed.plan,
          tokenBound: SearchUnits.tokensOfCall(queryBound, documents.map(byteTokens)),
          worstNanos: Money.toUnits(worstCase(primary.endpoint, request.query, documents), 9, "up")
        }
      })

      return Rerank.of({ create: (caller, request, options) => inFlight.track(create(caller, request, options)), dryRun })
    })
  )
}
