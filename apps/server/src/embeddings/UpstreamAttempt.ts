import type { EmbeddingProvider } from "@switchyard/core"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as EndpointParameters from "@switchyard/core/routing/EndpointParameters"
import type * as EmbeddingRequest from "@switchyard/core/schema/EmbeddingRequest"
import * as AttemptRecord from "@switchyard/core/upstream/AttemptRecord"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import type { RequestTimedOut } from "@switchyard/core/errors/EmbeddingsError"
import { Effect } from "effect"
import type { LoadedCatalog } from "../catalog/CatalogLoader.ts"
import { type AdapterTable, scrub, scrubText } from "../providers/Adapters.ts"
import type { Replicas } from "../providers/Replicas.ts"
import type { ForwardedResult } from "../providers/OpenAiCompatible.ts"
import * as CachedEmbed from "../cache/CachedEmbed.ts"
import type { EmbeddingCache } from "../cache/EmbeddingCache.ts"
import * as VectorEncoding from "../providers/VectorEncoding.ts"
import type { Prepared } from "./Preparation.ts"
import * as UpstreamInput from "../providers/UpstreamInput.ts"
import type * as HeldAttempts from "../pipeline/HeldAttempts.ts"
import * as Route from "../pipeline/Route.ts"

const withId = (upstreamId: string | undefined) => upstreamId === undefined ? {} : { upstreamId }

const isCount = (n: number) => Number.isSafeInteger(n) && n >= 0

// A request split into batches joins several answers, so every vector is measured, not the first.
const wrongWidth = (embeddings: ReadonlyArray<VectorEncoding.Forwarded>, expected: number): number | undefined => {
  for (const e of embeddings) {
    const width = VectorEncoding.widthOf(e.embedding)
    if (width !== expected) return width
  }
  return embeddings.length === 0 ? 0 : undefined
}

/**
 * A request's attempts, one endpoint each: the request reduced to what the endpoint takes, sent
 * in batches of its size, and the answer checked for width and token counts. `lookup` reads the
 * embeddings cache for each endpoint's vector space at once; `call` runs an attempt, reusing the
 * lookup made before for its endpoint.
 */
export const make = (services: {
  readonly adapters: AdapterTable
  readonly replicas: Replicas["Service"]
  readonly loaded: LoadedCatalog
  readonly cache: EmbeddingCache["Service"]
  readonly metrics: CachedEmbed.CacheMetrics
  readonly batchConcurrency: number
}) =>
(request: EmbeddingRequest.EmbeddingRequest, prepared: Prepared) => {
  const encoding = request.encoding_format ?? "float"

  // What an endpoint is sent, and the vector space its answer lives in.
  const shapeFor = (candidate: Fallback.Attempt["candidate"]) => {
    const { endpoint, provider } = candidate
    const { width: expected, ...asked } = EndpointParameters.forEndpoint(request, endpoint)
    const input = UpstreamInput.forEndpoint(prepared.input, Catalog.inputModalitiesOf(provider, endpoint))
    const space: CachedEmbed.VectorSpace = {
      workspaceId: prepared.workspaceId,
      endpoint: candidate.id,
      model: endpoint.model,
      upstreamModel: endpoint.upstream_model,
      quantization: endpoint.quantization,
      dimensions: expected,
      inputType: asked.inputType
    }
    return { expected, asked, input, space }
  }

  // Each endpoint's items, by endpoint id, in one read of the cache.
  const lookup = (attempts: ReadonlyArray<Fallback.Attempt>): Effect.Effect<ReadonlyMap<string, CachedEmbed.Lookup>> =>
    CachedEmbed.lookupAll({
      cache: services.cache,
      policy: prepared.cachePolicy,
      spaces: attempts.map(({ candidate }) => shapeFor(candidate))
    }).pipe(Effect.map((found) => new Map(found.map((one, i) => [attempts[i]!.candidate.id, one]))))

  const call = (found?: ReadonlyMap<string, CachedEmbed.Lookup>) =>
  ({ candidate }: Fallback.Attempt, limit: HeldAttempts.Limit): Effect.Effect<CachedEmbed.CachedResult, UpstreamError.UpstreamError | RequestTimedOut> => {
    const { endpoint, provider } = candidate
    const { expected, asked, input, space } = shapeFor(candidate)
    const base: Omit<EmbeddingProvider.UpstreamRequest, "input"> = { upstreamModel: endpoint.upstream_model, encodingFormat: encoding, ...asked }
    const connection = Route.connectionFor(prepared, services.loaded, provider)
    const adapter = services.adapters[provider.adapter]
    const forward = adapter.forward ?? adapter.embed
    // Each upstream call goes to one replica of a self-hosted server, the next one when it fails,
    // each try under the attempt's time limit.
    const embed = (connection: EmbeddingProvider.Connection, request: EmbeddingProvider.UpstreamRequest) =>
      services.replicas.through(provider, connection, (replica) => limit(forward(replica, request)))
    const send = (input: EmbeddingProvider.EmbeddingInput) => {
      const parts = UpstreamInput.batches(input, Catalog.batchSizeOf(endpoint))
      return parts.length === 1
      ? embed(connection, { ...base, input })
      : Effect.forEach(parts, (part) => embed(connection, { ...base, input: part }), { concurrency: services.batchConcurrency }).pipe(
        Effect.map((results): ForwardedResult => {
          let offset = 0
          const embeddings: Array<VectorEncoding.Forwarded> = []
          for (const [i, result] of results.entries()) {
            for (const e of result.embeddings) embeddings.push({ index: e.index + offset, embedding: e.embedding })
            offset += UpstreamInput.count(parts[i]!)
          }
          return {
            embeddings,
            promptTokens: results.reduce((n, r) => n + r.promptTokens, 0),
            totalTokens: results.reduce((n, r) => n + r.totalTokens, 0),
            ...withId(AttemptRecord.joinIds(results.map((r) => r.upstreamId))),
            ...(results.some((r) => r.tokensEstimated === true) ? { tokensEstimated: true } : {})
          }
        })
      )
    }
    const checked = (input: EmbeddingProvider.EmbeddingInput) => send(input).pipe(
      Effect.mapError((error) => error._tag === "UpstreamError" ? scrub(error, connection) : error),
      Effect.map((result) => result.upstreamId === undefined ? result : { ...result, upstreamId: scrubText(result.upstreamId, connection) }),
      Effect.flatMap((result) => {
        const got = wrongWidth(result.embeddings, expected)
        if (got !== undefined) return Effect.fail(UpstreamError.widthMismatch(expected, got))
        if (!isCount(result.promptTokens) || !isCount(result.totalTokens)) {
          return Effect.fail(UpstreamError.invalidResponse(
            `token counts must be whole numbers, got prompt ${result.promptTokens} and total ${result.totalTokens}`
          ))
        }
        return Effect.succeed(result)
      })
    )
    return CachedEmbed.embed({
      cache: services.cache,
      metrics: services.metrics,
      policy: prepared.cachePolicy,
      space,
      input,
      encoding,
      call: checked,
      found: found?.get(candidate.id)
    })
  }

  return { lookup, call }
}
