import type { EmbeddingProvider } from "@switchyard/core"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as EndpointParameters from "@switchyard/core/routing/EndpointParameters"
import type * as EmbeddingRequest from "@switchyard/core/schema/EmbeddingRequest"
import * as AttemptRecord from "@switchyard/core/upstream/AttemptRecord"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import * as OutputDtype from "@switchyard/core/vectors/OutputDtype"
import type { RequestTimedOut } from "@switchyard/core/errors/EmbeddingsError"
import { Effect } from "effect"
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
import * as AnswerVectors from "./AnswerVectors.ts"
import * as LongInputs from "./LongInputs.ts"

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

// Several calls' answers as one, in the order of the input.
const joined = (parts: ReadonlyArray<EmbeddingProvider.EmbeddingInput>, results: ReadonlyArray<ForwardedResult>): ForwardedResult => {
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
}

/**
 * What one endpoint is asked for the request (`EndpointParameters.forEndpoint`, the one
 * definition), the input as it takes it, and the vector space of its answer: the embeddings
 * cache's key holds the answer's width, the type the provider made (a type the gateway makes is
 * derived from the floats kept) and the long-input mode with its limit.
 */
export const shapeOf = (request: EmbeddingRequest.EmbeddingRequest, prepared: Pick<Prepared, "input" | "workspaceId">, candidate: Fallback.Attempt["candidate"]) => {
  const { endpoint, provider } = candidate
  const asked = EndpointParameters.forEndpoint(request, provider, endpoint)
  const input = UpstreamInput.forEndpoint(prepared.input, Catalog.inputModalitiesOf(provider, endpoint))
  const space: CachedEmbed.VectorSpace = {
    workspaceId: prepared.workspaceId,
    endpoint: candidate.id,
    model: endpoint.model,
    upstreamModel: endpoint.upstream_model,
    quantization: endpoint.quantization,
    dimensions: asked.answerWidth,
    inputType: asked.inputType,
    ...(asked.outputDtype !== undefined ? { dtype: asked.outputDtype } : {}),
    ...(asked.long.mode !== "none" ? { truncate: `${asked.long.mode}:${asked.long.maxInputTokens ?? ""}` } : {})
  }
  return { asked, input, space }
}

/**
 * A request's attempts, one endpoint each: the request reduced to what the endpoint takes, its
 * long inputs refused, cut or split within the endpoint's limit, sent in batches of its size, the
 * answer checked for width and token counts, gathered into one vector per item at the answer's
 * width, and finished in the type and encoding asked. `lookup` reads the embeddings cache for
 * each endpoint's vector space at once; `call` runs an attempt, reusing the lookup made before for
 * its endpoint.
 */
export const make = (services: {
  readonly adapters: AdapterTable
  readonly replicas: Replicas["Service"]
  readonly cache: EmbeddingCache["Service"]
  readonly metrics: CachedEmbed.CacheMetrics
  readonly batchConcurrency: number
}) =>
(request: EmbeddingRequest.EmbeddingRequest, prepared: Prepared) => {
  // Each endpoint's items, by endpoint id, in one read of the cache.
  const lookup = (attempts: ReadonlyArray<Fallback.Attempt>): Effect.Effect<ReadonlyMap<string, CachedEmbed.Lookup>> =>
    CachedEmbed.lookupAll({
      cache: services.cache,
      policy: prepared.cachePolicy,
      spaces: attempts.map(({ candidate }) => shapeOf(request, prepared, candidate))
    }).pipe(Effect.map((found) => new Map(found.map((one, i) => [attempts[i]!.candidate.id, one]))))

  const call = (found?: ReadonlyMap<string, CachedEmbed.Lookup>) =>
  ({ candidate }: Fallback.Attempt, limit: HeldAttempts.Limit): Effect.Effect<CachedEmbed.CachedResult, UpstreamError.UpstreamError | RequestTimedOut> => {
    const { endpoint, provider } = candidate
    const { asked, input, space } = shapeOf(request, prepared, candidate)
    const base: Omit<EmbeddingProvider.UpstreamRequest, "input"> = {
      upstreamModel: endpoint.upstream_model,
      // A type the provider makes comes back as its numbers, written by the gateway.
      encodingFormat: asked.outputDtype === undefined ? asked.encoding : "float",
      ...(asked.dimensions !== undefined ? { dimensions: asked.dimensions } : {}),
      ...(asked.inputType !== undefined ? { inputType: asked.inputType } : {}),
      ...(asked.user !== undefined ? { user: asked.user } : {}),
      ...(asked.outputDtype !== undefined ? { outputDtype: asked.outputDtype } : {}),
      ...(asked.long.native !== undefined ? { truncate: asked.long.native } : {}),
      ...(endpoint.max_input_tokens !== undefined ? { maxInputTokens: endpoint.max_input_tokens } : {})
    }
    const connection = Route.connectionFor(prepared, provider)
    const adapter = services.adapters[provider.adapter]
    const forward = adapter.forward ?? adapter.embed
    // Each upstream call goes to one replica of a self-hosted server, the next one when it fails,
    // each try under the attempt's time limit.
    const through = <A>(f: (connection: EmbeddingProvider.Connection) => Effect.Effect<A, UpstreamError.UpstreamError>) =>
      services.replicas.through(provider, connection, (replica) => limit(f(replica)))
    const tokenize = adapter.tokenize
    const serverTokenize = tokenize === undefined
      ? undefined
      : (texts: ReadonlyArray<string>) => through((replica) => tokenize(replica, endpoint.upstream_model, texts))
    const send = (input: EmbeddingProvider.EmbeddingInput) => {
      const parts = UpstreamInput.batches(input, Catalog.batchSizeOf(endpoint))
      return parts.length === 1
        ? through((replica) => forward(replica, { ...base, input }))
        : Effect.forEach(parts, (part) => through((replica) => forward(replica, { ...base, input: part })), {
          concurrency: services.batchConcurrency
        }).pipe(Effect.map((results) => joined(parts, results)))
    }
    // A provider told not to cut refuses a long input in its own words: the refusal the gateway
    // would have made, where it could not count.
    const refusal = (count: number) => (error: UpstreamError.UpstreamError | RequestTimedOut) =>
      error._tag === "UpstreamError" && asked.long.native === "none"
        ? UpstreamError.asInputTooLong(error, { model: endpoint.model, maxInputTokens: endpoint.max_input_tokens, count })
        : error
    const expected = OutputDtype.lengthOf(asked.width, asked.outputDtype ?? "float")
    const checked = (input: EmbeddingProvider.EmbeddingInput) =>
      LongInputs.prepare(asked.long, endpoint.model, input, serverTokenize).pipe(
        Effect.flatMap((ready) =>
          send(ready.input).pipe(
            Effect.mapError(refusal(UpstreamInput.count(input))),
            Effect.flatMap((result) => {
              const got = wrongWidth(result.embeddings, expected)
              if (got !== undefined) return Effect.fail(UpstreamError.widthMismatch(expected, got))
              if (!isCount(result.promptTokens) || !isCount(result.totalTokens)) {
                return Effect.fail(UpstreamError.invalidResponse(
                  `token counts must be whole numbers, got prompt ${result.promptTokens} and total ${result.totalTokens}`
                ))
              }
              const problem = AnswerVectors.nativeProblem(asked, result.embeddings)
              if (problem !== undefined) return Effect.fail(UpstreamError.invalidResponse(problem))
              return Effect.succeed(
                asked.plain && ready.windows === undefined
                  ? result
                  : { ...result, embeddings: AnswerVectors.gathered(asked, ready.windows, result.embeddings) }
              )
            })
          )
        ),
        Effect.mapError((error) => error._tag === "UpstreamError" ? scrub(error, connection) : error),
        Effect.map((result) => result.upstreamId === undefined ? result : { ...result, upstreamId: scrubText(result.upstreamId, connection) })
      )
    return CachedEmbed.embed({
      cache: services.cache,
      metrics: services.metrics,
      policy: prepared.cachePolicy,
      space,
      input,
      call: checked,
      found: found?.get(candidate.id)
    }).pipe(Effect.map((result) => finish(asked, result)))
  }

  return { lookup, call }
}

/** A result's vectors in the type and encoding the request asked (`AnswerVectors.finished`). */
export const finish = (asked: EndpointParameters.Asked, result: CachedEmbed.CachedResult): CachedEmbed.CachedResult => ({
  ...result,
  embeddings: AnswerVectors.finished(asked, result.embeddings)
})
