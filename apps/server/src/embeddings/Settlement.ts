import * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import * as Cost from "@switchyard/core/catalog/Cost"
import * as EndpointParameters from "@switchyard/core/routing/EndpointParameters"
import type { EmbeddingProvider } from "@switchyard/core"
import type * as RoutePlan from "@switchyard/core/routing/RoutePlan"
import type * as EmbeddingRequest from "@switchyard/core/schema/EmbeddingRequest"
import type { Accounting } from "@switchyard/core/store/Accounting"
import * as AttemptRecord from "@switchyard/core/upstream/AttemptRecord"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import { Effect } from "effect"
import type * as CachedEmbed from "../cache/CachedEmbed.ts"
import * as VectorEncoding from "../providers/VectorEncoding.ts"
import type { Prepared } from "./Preparation.ts"
import * as GenerationId from "../pipeline/GenerationId.ts"
import * as HeldAttempts from "../pipeline/HeldAttempts.ts"
import * as UpstreamInput from "../providers/UpstreamInput.ts"

type AttemptReport = Fallback.AttemptReport

/**
 * A served request, settled: what the response and the broadcast are made of.
 */
export interface Served {
  readonly id: string
  readonly model: string
  readonly provider: string
  readonly endpoint: string
  /** In input order; vectors forwarded as the upstream wrote them stay in its bytes. */
  readonly data: ReadonlyArray<VectorEncoding.Forwarded>
  readonly encoding: "float" | "base64"
  readonly dimensions: number
  readonly promptTokens: number
  readonly totalTokens: number
  readonly modalityTokens: EmbeddingProvider.ModalityTokens | undefined
  /** The upstream reported no count: the token counts are the gateway's estimate. */
  readonly tokensEstimated?: boolean
  readonly costNanos: bigint
  readonly upstreamCostAtto: bigint
  readonly isByok: boolean
  readonly plan: RoutePlan.Plan
  readonly attempts: ReadonlyArray<AttemptReport>
  /** Set when a fallback served vectors of another width or quantization than the primary's. */
  readonly vectorSpaceChange: VectorSpaceChange | undefined
  /** What the embeddings cache did: its outcome, and the items, tokens and bytes it served. */
  readonly cache: { readonly outcome: CachePolicy.Outcome; readonly items: number; readonly tokens: number; readonly bytes: number }
}

/**
 * A fallback whose vectors are not comparable with the primary endpoint's: another width or
 * another quantization of the weights.
 */
interface VectorSpaceChange {
  readonly primary: string
  readonly primary_dimensions: number
  readonly primary_quantization: string
  readonly served_by: string
  readonly dimensions: number
  readonly quantization: string
}

/** A fresh generation id of an embeddings request. */
export const generationId = GenerationId.make("emb")

/**
 * Settles the hold at the actual cost of the answer and shapes the served request.
 */
export const settle = Effect.fnUntraced(function*(
  accounting: Accounting["Service"],
  reservation: Effect.Success<ReturnType<Accounting["Service"]["reserve"]>>,
  request: EmbeddingRequest.EmbeddingRequest,
  prepared: Prepared,
  outcome: Fallback.Served<CachedEmbed.CachedResult>,
  latencyMs?: number,
  givenId?: string
) {
  const { attempt: { candidate, byok: isByok }, value: result } = outcome
  const images = result.sent === undefined ? 0 : UpstreamInput.imageCount(result.sent)
  const upstreamAtto = Cost.compute(candidate.endpoint.pricing, { prompt_tokens: result.promptTokens, images }).total
  const id = givenId ?? (yield* generationId)
  const settlement = yield* accounting.settle(reservation, {
    generationId: id,
    model: candidate.endpoint.model,
    provider: candidate.provider.slug,
    promptTokens: result.promptTokens,
    totalTokens: result.totalTokens,
    costNanos: HeldAttempts.nanosOf(upstreamAtto),
    isByok,
    latencyMs,
    cachedItems: result.cachedItems,
    cachedTokens: result.cachedTokens,
    attempts: AttemptRecord.fromReports(outcome.reports, result.upstreamId, { vector: factsOf(request, candidate) })
  })
  return shape(request, prepared, outcome, { id, costNanos: settlement.costNanos, upstreamAtto })
})

// What the generation record says of the served endpoint's vectors.
const factsOf = (request: EmbeddingRequest.EmbeddingRequest, candidate: RoutePlan.Plan["attempts"][number]) =>
  EndpointParameters.factsOf(EndpointParameters.forEndpoint(request, candidate.provider, candidate.endpoint))

/**
 * Records a request the cache served entirely (no hold, no upstream call, cost 0) and shapes
 * the served request.
 */
export const record = Effect.fnUntraced(function*(
  accounting: Accounting["Service"],
  caller: { readonly keyId: string; readonly workspaceId: string },
  request: EmbeddingRequest.EmbeddingRequest,
  prepared: Prepared,
  outcome: Fallback.Served<CachedEmbed.CachedResult>,
  latencyMs: number,
  givenId?: string
) {
  const { attempt: { candidate, byok: isByok }, value: result } = outcome
  const id = givenId ?? (yield* generationId)
  yield* accounting.record({
    keyId: caller.keyId,
    workspaceId: caller.workspaceId,
    generationId: id,
    model: candidate.endpoint.model,
    provider: candidate.provider.slug,
    promptTokens: result.promptTokens,
    totalTokens: result.totalTokens,
    isByok,
    latencyMs,
    cachedItems: result.cachedItems,
    cachedTokens: result.cachedTokens,
    // No upstream call was made.
    attempts: []
  })
  return shape(request, prepared, outcome, { id, costNanos: 0n, upstreamAtto: 0n })
})

// The primary's width is worked out only when a fallback served: the attempt sent it already.
const spaceChange = (
  request: EmbeddingRequest.EmbeddingRequest,
  primary: RoutePlan.Plan["attempts"][number],
  served: RoutePlan.Plan["attempts"][number],
  dimensions: number
): VectorSpaceChange | undefined => {
  if (primary.id === served.id) return undefined
  const primaryDimensions = EndpointParameters.forEndpoint(request, primary.provider, primary.endpoint).answerWidth
  if (primaryDimensions === dimensions && primary.endpoint.quantization === served.endpoint.quantization) return undefined
  return {
    primary: primary.id,
    primary_dimensions: primaryDimensions,
    primary_quantization: primary.endpoint.quantization,
    served_by: served.id,
    dimensions,
    quantization: served.endpoint.quantization
  }
}

const shape = (
  request: EmbeddingRequest.EmbeddingRequest,
  prepared: Prepared,
  outcome: Fallback.Served<CachedEmbed.CachedResult>,
  charged: { readonly id: string; readonly costNanos: bigint; readonly upstreamAtto: bigint }
): Served => {
  const { attempt: { candidate, byok: isByok }, value: result } = outcome
  const { id, upstreamAtto } = charged
  const dimensions = EndpointParameters.forEndpoint(request, candidate.provider, candidate.endpoint).answerWidth
  const sorted = [...result.embeddings].sort((a, b) => a.index - b.index)
  return {
    id,
    model: candidate.endpoint.model,
    provider: candidate.provider.slug,
    endpoint: candidate.id,
    data: sorted,
    encoding: request.encoding_format ?? "float",
    dimensions,
    promptTokens: result.promptTokens + result.cachedTokens,
    totalTokens: result.totalTokens + result.cachedTokens,
    modalityTokens: result.modalityTokens,
    ...(result.tokensEstimated === true ? { tokensEstimated: true } : {}),
    costNanos: charged.costNanos,
    upstreamCostAtto: upstreamAtto,
    isByok,
    plan: prepared.plan,
    attempts: outcome.reports,
    vectorSpaceChange: spaceChange(request, prepared.plan.attempts[0]!, candidate, dimensions),
    cache: {
      outcome: CachePolicy.outcome(prepared.cachePolicy, UpstreamInput.count(prepared.input), result.cachedItems),
      items: result.cachedItems,
      tokens: result.cachedTokens,
      bytes: result.cachedBytes
    }
  }
}
