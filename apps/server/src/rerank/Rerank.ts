import type { CallerShape } from "@switchyard/core/api/Authorization"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as Cost from "@switchyard/core/catalog/Cost"
import * as Money from "@switchyard/core/catalog/Money"
import * as SearchUnits from "@switchyard/core/catalog/SearchUnits"
import type { EmbeddingsError, PreparationError, RequestTimedOut } from "@switchyard/core/errors/EmbeddingsError"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import type * as RerankProvider from "@switchyard/core/providers/RerankProvider"
import type * as RoutePlan from "@switchyard/core/routing/RoutePlan"
import * as RerankRequest from "@switchyard/core/schema/RerankRequest"
import { Accounting, type Reservation } from "@switchyard/core/store/Accounting"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import * as AttemptRecord from "@switchyard/core/upstream/AttemptRecord"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Context, Effect, Layer } from "effect"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { EndpointHealth } from "../pipeline/EndpointHealth.ts"
import * as GenerationId from "../pipeline/GenerationId.ts"
import { Workspaces } from "../pipeline/Workspaces.ts"
import { Adapters, scrub, scrubText } from "../providers/Adapters.ts"
import { Replicas } from "../providers/Replicas.ts"
import * as TokenEstimate from "../providers/TokenEstimate.ts"
import * as AttemptObserver from "../pipeline/AttemptObserver.ts"
import * as Route from "../pipeline/Route.ts"
import { InFlight } from "../store/money/InFlight.ts"
import * as HeldAttempts from "../pipeline/HeldAttempts.ts"
import * as Span from "../instrumentation/Span.ts"
import * as AnswerAdmission from "../http/AnswerAdmission.ts"
import { MemoryBudget, ownerOf } from "../http/MemoryBudget.ts"

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
  /** The provider's id of its answer (ids comma-separated when sent in batches). */
  readonly upstreamId: string | undefined
}

/**
 * A request's documents and what they measure, taken once per request: token estimates (to compare
 * prices when routing, and to bill a provider that reports no usage) and UTF-8 byte counts (an
 * image's fixed count added), which bound tokens from above (for the hold).
 */
interface Measured {
  readonly documents: ReadonlyArray<RerankRequest.Document>
  readonly queryTokens: number
  readonly documentTokens: ReadonlyArray<number>
  readonly queryBytes: number
  readonly documentBytes: ReadonlyArray<number>
}

const bytes = (text: string) => Buffer.byteLength(text, "utf8")

// An image weighs a fixed count of tokens, above what a reranker cuts a page to: its bytes (a URL,
// or base64) say nothing of it.
const imageTokens = (document: RerankRequest.Document) => (document.image === undefined ? 0 : RerankRequest.imageTokens)

const measure = (request: RerankRequest.RerankRequest): Measured => {
  const documents = RerankRequest.documents(request)
  return {
    documents,
    queryTokens: TokenEstimate.ofText(request.query),
    documentTokens: documents.map((d) => TokenEstimate.ofText(d.text ?? "") + imageTokens(d)),
    queryBytes: bytes(request.query),
    documentBytes: documents.map((d) => bytes(d.text ?? "") + imageTokens(d))
  }
}

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
const worstCase = (endpoint: Catalog.Endpoint, measured: Measured): bigint => {
  let searchUnits = 0
  let tokens = 0
  for (const { start, end } of calls(measured.documents.length, Catalog.batchSizeOf(endpoint))) {
    const bounds = measured.documentBytes.slice(start, end)
    searchUnits += SearchUnits.ofCall(measured.queryBytes, bounds)
    tokens += SearchUnits.tokensOfCall(measured.queryBytes, bounds)
  }
  return Cost.compute(endpoint.pricing, { prompt_tokens: tokens, search_units: searchUnits }).total
}

/** Scores best first; equal scores keep the documents' order. */
const ranked = (scores: ReadonlyArray<RerankProvider.Score>, topN: number | undefined) => {
  const sorted = [...scores].sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
  return topN === undefined ? sorted : sorted.slice(0, topN)
}

/** One attempt's calls of the endpoint, `max_documents` at a time through its replicas, merged by index. */
const callOn = (deps: {
  readonly adapters: Adapters["Service"]
  readonly replicas: Replicas["Service"]
  readonly config: { readonly batchConcurrency: number }
}) =>
(request: RerankRequest.RerankRequest, measured: Measured, routed: Pick<Route.Route, "own" | "snapshot">) =>
  ({ candidate }: Fallback.Attempt, limit: HeldAttempts.Limit): Effect.Effect<Billed, UpstreamError.UpstreamError | RequestTimedOut> => {
    const { provider, endpoint } = candidate
    const rerank = deps.adapters[provider.adapter].rerank
    if (rerank === undefined) return Effect.fail(UpstreamError.unsupportedInput(`adapter ${provider.adapter} has no rerank API`))
    const connection = Route.connectionFor(routed, provider)
    const maxTokensPerDoc = request.max_tokens_per_doc !== undefined && endpoint.supported_parameters.includes("max_tokens_per_doc")
      ? request.max_tokens_per_doc
      : undefined
    const { documents, queryTokens, documentTokens } = measured
    return Effect.forEach(calls(documents.length, Catalog.batchSizeOf(endpoint)), ({ start, end }) =>
      deps.replicas.through(provider, connection, (replica) => limit(rerank(replica, {
        upstreamModel: endpoint.upstream_model,
        query: request.query,
        documents: documents.slice(start, end),
        ...(maxTokensPerDoc !== undefined ? { maxTokensPerDoc } : {})
      }))).pipe(Effect.map((result): Billed => {
        // A provider that reports no usage is billed on the gateway's own count.
        const estimated = documentTokens.slice(start, end)
        return {
          scores: result.scores.map((s) => ({ index: s.index + start, relevance_score: s.relevance_score })),
          searchUnits: result.searchUnits ?? SearchUnits.ofCall(queryTokens, estimated),
          totalTokens: result.totalTokens ?? SearchUnits.tokensOfCall(queryTokens, estimated),
          upstreamId: result.upstreamId === undefined ? undefined : scrubText(result.upstreamId, connection)
        }
      }))
    , { concurrency: deps.config.batchConcurrency }).pipe(
      Effect.map((parts): Billed => ({
        scores: parts.flatMap((p) => p.scores),
        searchUnits: parts.reduce((n, p) => n + p.searchUnits, 0),
        totalTokens: parts.reduce((n, p) => n + p.totalTokens, 0),
        upstreamId: AttemptRecord.joinIds(parts.map((p) => p.upstreamId))
      })),
      Effect.mapError((error) => error._tag === "UpstreamError" ? scrub(error, connection) : error)
    )
  }

/** A fresh generation id: the time it was made and random bits. */
const generationId = GenerationId.make("rr")

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
    options: { readonly seed?: number | undefined; readonly generationId?: string | undefined; readonly waitForMemory?: boolean | undefined }
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
      const replicas = yield* Replicas
      const inFlight = yield* InFlight
      const budget = yield* MemoryBudget
      const config = yield* HeldAttempts.CallConfig
      const route = Route.make({ loaded, health, byok: yield* ByokStore, workspaces: yield* Workspaces })
      const observe = AttemptObserver.make(health, (billed: Billed) => billed.totalTokens)

      const call = callOn({ adapters, replicas, config })

      // The route, and the request's documents measured.
      const prepare = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: RerankRequest.RerankRequest,
        options: { readonly seed?: number | undefined }
      ) {
        const measured = measure(request)
        const routed = yield* route(caller, {
          task: "rerank",
          model: request.model,
          preferences: request.provider,
          sentParameters: RerankRequest.sentParameters(request),
          inputModalities: RerankRequest.inputModalities(request),
          seed: options.seed,
          // Per-token and per-search prices compare by what this request would cost.
          consumption: {
            prompt_tokens: SearchUnits.tokensOfCall(measured.queryTokens, measured.documentTokens),
            search_units: SearchUnits.ofCall(measured.queryTokens, measured.documentTokens)
          }
        })
        return { routed, measured }
      })

      const create = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: RerankRequest.RerankRequest,
        options: { readonly seed?: number | undefined; readonly generationId?: string | undefined; readonly waitForMemory?: boolean | undefined }
      ) {
        const startedAt = yield* Clock.currentTimeMillis
        const { routed, measured } = yield* prepare(caller, request, options)
        // Charged its answer (the documents echoed back, a result each) before any upstream call.
        const expected = AnswerAdmission.rerank(measured.documentBytes, request.return_documents !== false)
        return yield* served(caller, request, options, startedAt, routed, measured).pipe(
          AnswerAdmission.charged(budget, ownerOf(caller), expected, { wait: options.waitForMemory === true })
        )
      }, Span.within("Rerank.create"))

      const served = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: RerankRequest.RerankRequest,
        options: { readonly generationId?: string | undefined },
        startedAt: number,
        routed: Route.Route,
        measured: Measured
      ) {
        const settle = Effect.fnUntraced(function*(reservation: Reservation, outcome: Fallback.Served<Billed>) {
          const { attempt: { candidate, byok: isByok }, value: billed } = outcome
          const upstreamAtto = Cost.compute(candidate.endpoint.pricing, {
            prompt_tokens: billed.totalTokens,
            search_units: billed.searchUnits
          }).total
          const id = options.generationId ?? (yield* generationId)
          const latencyMs = (yield* Clock.currentTimeMillis) - startedAt
          const settlement = yield* accounting.settle(reservation, {
            generationId: id,
            model: candidate.endpoint.model,
            provider: candidate.provider.slug,
            promptTokens: billed.totalTokens,
            totalTokens: billed.totalTokens,
            costNanos: HeldAttempts.nanosOf(upstreamAtto),
            isByok,
            latencyMs,
            attempts: AttemptRecord.fromReports(outcome.reports, billed.upstreamId)
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
        return yield* HeldAttempts.settledOnce(
          accounting.reserve({
            keyId: caller.keyId,
            workspaceId: caller.workspaceId,
            amountNanos: Money.toUnits(Route.worstOf(routed.plan, (endpoint) => worstCase(endpoint, measured)), 9, "up"),
            byok: routed.attempts.every((a) => a.byok)
          }),
          (reservation) =>
            HeldAttempts.run({
              accounting,
              reservation,
              attempts: routed.attempts,
              call: call(request, measured, routed),
              observe: observe(caller),
              span: "Rerank.attempt",
              tokensOf: (billed) => billed.totalTokens,
              timeoutMs: config.requestTimeoutMs,
              attemptTimeoutMs: config.attemptTimeoutMs
            }),
          settle
        )
      })

      const dryRun = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: RerankRequest.RerankRequest,
        options: { readonly seed?: number | undefined }
      ) {
        const { routed, measured } = yield* prepare(caller, request, options)
        const primary = routed.plan.attempts[0]!
        return {
          plan: routed.plan,
          tokenBound: SearchUnits.tokensOfCall(measured.queryBytes, measured.documentBytes),
          worstNanos: Money.toUnits(worstCase(primary.endpoint, measured), 9, "up")
        }
      }, Span.within("Rerank.dryRun"))

      // Counted until settled: the ledger batch waits a moment for the rows of requests in flight.
      return Rerank.of({ create: (caller, request, options) => inFlight.track(create(caller, request, options)), dryRun })
    })
  )
}
