import type { CallerShape } from "@switchyard/core/api/Authorization"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as Cost from "@switchyard/core/catalog/Cost"
import * as Money from "@switchyard/core/catalog/Money"
import { type ApiError, type NotFound, RequestTimeout } from "@switchyard/core/errors/ApiError"
import type { EmbeddingProvider } from "@switchyard/core"
import type { Candidate } from "@switchyard/core/routing/Candidates"
import * as RoutePlan from "@switchyard/core/routing/RoutePlan"
import * as EmbeddingRequest from "@switchyard/core/schema/EmbeddingRequest"
import { Accounting } from "@switchyard/core/store/Accounting"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import * as UpstreamFailure from "@switchyard/core/upstream/UpstreamFailure"
import { Clock, Config, Context, Duration, Effect, Exit, Layer, Option, Redacted } from "effect"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { Adapters, connectionOf } from "../providers/Adapters.ts"
import type { ForwardedResult } from "../providers/OpenAiCompatible.ts"
import * as VectorEncoding from "../providers/VectorEncoding.ts"
import { EndpointHealth } from "./EndpointHealth.ts"
import * as RandomPool from "./RandomPool.ts"
import * as UpstreamInput from "./UpstreamInput.ts"
import { Workspaces } from "./Workspaces.ts"

export interface CallOptions {
  /** Seed of the plan's random draw; random when absent. */
  readonly seed?: number | undefined
}

/**
 * One attempt of a request, for the routing explanation.
 */
export interface AttemptReport {
  readonly endpoint: string
  readonly provider: string
  readonly outcome: "success" | "failure" | "skipped"
  readonly reason?: string
  readonly status?: number
  readonly message?: string
  readonly latency_ms?: number
  readonly byok: boolean
}

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
  readonly costNanos: bigint
  readonly upstreamCostAtto: bigint
  readonly isByok: boolean
  readonly plan: RoutePlan.Plan
  readonly attempts: ReadonlyArray<AttemptReport>
  /** Set when a fallback served vectors of another width or quantization than the primary's. */
  readonly vectorSpaceChange: VectorSpaceChange | undefined
}

/**
 * A fallback whose vectors are not comparable with the primary endpoint's: another width or
 * another quantization of the weights.
 */
export interface VectorSpaceChange {
  readonly primary: string
  readonly primary_dimensions: number
  readonly primary_quantization: string
  readonly served_by: string
  readonly dimensions: number
  readonly quantization: string
}

export interface DryRun {
  readonly plan: RoutePlan.Plan
  readonly estimatedPromptTokens: number
  readonly estimatedCostNanos: bigint
}

export const EmbeddingsConfig = Config.all({
  requestTimeoutMs: Config.Int("SWITCHYARD_REQUEST_TIMEOUT_MS").pipe(Config.withDefault(120_000)),
  attemptTimeoutMs: Config.Int("SWITCHYARD_ATTEMPT_TIMEOUT_MS").pipe(Config.withDefault(30_000)),
  batchConcurrency: Config.Int("SWITCHYARD_BATCH_CONCURRENCY").pipe(Config.withDefault(4))
})

const nanosOf = (atto: bigint) => Money.toUnits(atto, 9, "half-even")

const isCount = (n: number) => Number.isSafeInteger(n) && n >= 0

const widthOf = (embeddings: ReadonlyArray<VectorEncoding.Forwarded>): number => {
  const first = embeddings[0]?.embedding
  return first === undefined ? 0 : VectorEncoding.widthOf(first)
}

// A request split into batches joins several answers, so every vector is measured, not the first.
const wrongWidth = (embeddings: ReadonlyArray<VectorEncoding.Forwarded>, expected: number): number | undefined => {
  for (const e of embeddings) {
    const width = VectorEncoding.widthOf(e.embedding)
    if (width !== expected) return width
  }
  return embeddings.length === 0 ? 0 : undefined
}

const secretHeader = /auth|key|token|secret|signature|cookie|password/iu

// Providers quote the credential they were sent in their error messages ("Incorrect API key
// provided: ..."); pattern-based redaction misses keys without a known prefix, so every string of
// the failure has the exact credentials of this connection taken out.
const scrubReason = (
  reason: EmbeddingProvider.UpstreamErrorReason,
  connection: EmbeddingProvider.Connection
): EmbeddingProvider.UpstreamErrorReason => {
  const secrets = [
    ...(connection.apiKey === undefined ? [] : [Redacted.value(connection.apiKey)]),
    ...Object.entries(connection.headers ?? {}).filter(([name]) => secretHeader.test(name)).map(([, value]) => value)
  ].filter((secret) => secret.length >= 4)
  if (secrets.length === 0) return reason
  const scrub = (text: string) => secrets.reduce((out, secret) => out.split(secret).join("[redacted]"), text)
  return Object.fromEntries(
    Object.entries(reason).map(([key, value]) => [key, typeof value === "string" && key !== "_tag" ? scrub(value) : value])
  ) as unknown as EmbeddingProvider.UpstreamErrorReason
}

export const generationId = () => `gen-emb-${Date.now().toString(36)}-${RandomPool.base64url(9)}`

/**
 * Embeddings end to end: plan the route, hold the worst case, try the endpoints in plan order,
 * settle the actual cost.
 */
export class Embeddings extends Context.Service<Embeddings, {
  readonly create: (caller: CallerShape, request: EmbeddingRequest.EmbeddingRequest, options: CallOptions) => Effect.Effect<Served, ApiError>
  readonly dryRun: (caller: CallerShape, request: EmbeddingRequest.EmbeddingRequest, options: CallOptions) => Effect.Effect<DryRun, NotFound>
}>()("@switchyard/server/embeddings/Embeddings") {
  static readonly layer = Layer.effect(
    Embeddings,
    Effect.gen(function*() {
      const loaded = yield* CurrentCatalog
      const adapters = yield* Adapters
      const health = yield* EndpointHealth
      const accounting = yield* Accounting
      const byok = yield* ByokStore
      const workspaces = yield* Workspaces
      const config = yield* EmbeddingsConfig

      // The catalog is fixed for the life of the process: which providers serve a model is worked
      // out once, not by scanning every provider on every request.
      const serving = new Map<string, Array<(typeof loaded.catalog.providers)[number]>>()
      for (const provider of loaded.catalog.providers) {
        for (const model of new Set(provider.endpoints.map((e) => e.model.toLowerCase()))) {
          serving.set(model, [...(serving.get(model) ?? []), provider])
        }
      }
      const servingProviders = (model: string) => serving.get(model.toLowerCase()) ?? []

      const prepare = Effect.fnUntraced(function*(caller: CallerShape, request: EmbeddingRequest.EmbeddingRequest, options: CallOptions) {
        const now = yield* Clock.currentTimeMillis
        const slug = yield* workspaces.slugOf(caller.workspaceId)
        const own = new Map<string, Redacted.Redacted<string>>()
        for (const provider of servingProviders(request.model)) {
          if (provider.adapter === "local") continue
          const credential = yield* byok.credentialFor(caller.workspaceId, provider.slug)
          if (Option.isSome(credential)) own.set(provider.slug, credential.value)
        }
        const seed = options.seed ?? RandomPool.uint32()
        const plan = yield* RoutePlan.plan({
          catalog: loaded.catalog,
          model: request.model,
          preferences: request.provider ?? null,
          workspace: Catalog.workspace(loaded.catalog, slug),
          sentParameters: EmbeddingRequest.sentParameters(request),
          inputModalities: EmbeddingRequest.inputModalities(request),
          isActive: (p) => loaded.active.has(p.slug) || own.has(p.slug),
          stats: health.stats(now),
          now,
          seed
        })
        const input = UpstreamInput.normalize(request.input)
        const bound = UpstreamInput.tokenBound(input)
        const worstAtto = plan.attempts.reduce((max, c) => {
          const cost = Cost.compute(c.endpoint.pricing, { prompt_tokens: bound.tokens, images: bound.images }).total
          return cost > max ? cost : max
        }, 0n)
        return { plan, own, input, bound, worstNanos: Money.toUnits(worstAtto, 9, "up") }
      })

      const attempt = (
        candidate: Candidate,
        request: EmbeddingRequest.EmbeddingRequest,
        input: EmbeddingProvider.EmbeddingInput,
        credential: Redacted.Redacted<string> | undefined
      ): Effect.Effect<ForwardedResult, UpstreamFailure.UpstreamFailure> => {
        const { endpoint, provider } = candidate
        const context = { provider: provider.slug, endpoint: candidate.id }
        const supports = (name: string) => endpoint.supported_parameters.includes(name)
        const encoding = request.encoding_format ?? "float"
        if (request.dimensions !== undefined && !supports("dimensions") && request.dimensions !== endpoint.dimensions) {
          return Effect.fail(UpstreamFailure.fromAttempt(
            { _tag: "UnsupportedInput", detail: `it returns ${endpoint.dimensions} dimensions and cannot be asked for ${request.dimensions}` },
            context
          ))
        }
        const base: Omit<EmbeddingProvider.UpstreamRequest, "input"> = {
          upstreamModel: endpoint.upstream_model,
          encodingFormat: encoding,
          ...(request.dimensions !== undefined && supports("dimensions") ? { dimensions: request.dimensions } : {}),
          ...(request.input_type !== undefined && supports("input_type") ? { inputType: request.input_type } : {}),
          ...(request.user !== undefined && supports("user") ? { user: request.user } : {})
        }
        const connection = connectionOf(provider, credential, provider.timeout_ms ?? config.attemptTimeoutMs)
        const adapter = adapters[provider.adapter]
        const embed = adapter.forward ?? adapter.embed
        const parts = UpstreamInput.batches(input, endpoint.max_batch_items)
        const call = parts.length === 1
          ? embed(connection, { ...base, input })
          : Effect.forEach(parts, (part) => embed(connection, { ...base, input: part }), { concurrency: config.batchConcurrency }).pipe(
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
                totalTokens: results.reduce((n, r) => n + r.totalTokens, 0)
              }
            })
          )
        const expected = request.dimensions ?? endpoint.dimensions
        return call.pipe(
          Effect.mapError((error) => UpstreamFailure.fromAttempt(scrubReason(error.reason, connection), context)),
          Effect.flatMap((result) => {
            const got = wrongWidth(result.embeddings, expected)
            if (got !== undefined) {
              return Effect.fail(UpstreamFailure.fromAttempt({ _tag: "WidthMismatch", expected, got }, context))
            }
            if (!isCount(result.promptTokens) || !isCount(result.totalTokens)) {
              return Effect.fail(UpstreamFailure.fromAttempt({
                _tag: "InvalidResponse",
                detail: `token counts must be whole numbers, got prompt ${result.promptTokens} and total ${result.totalTokens}`
              }, context))
            }
            return Effect.succeed(result)
          })
        )
      }

      const execute = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        prepared: Effect.Success<ReturnType<typeof prepare>>
      ) {
        const { plan, own, input } = prepared
        const reports: Array<AttemptReport> = []
        let last: UpstreamFailure.UpstreamFailure | undefined
        for (const candidate of plan.attempts) {
          const credential = own.get(candidate.provider.slug) ?? loaded.credentials.get(candidate.provider.slug)
          const isByok = own.has(candidate.provider.slug)
          const started = yield* Clock.currentTimeMillis
          const exit = yield* Effect.exit(attempt(candidate, request, input, credential))
          const ended = yield* Clock.currentTimeMillis
          if (Exit.isSuccess(exit)) {
            const result = exit.value
            const seconds = Math.max((ended - started) / 1000, 1e-6)
            health.success(candidate.id, { at: ended, latencySeconds: seconds, tokensPerSecond: result.promptTokens / seconds })
            reports.push({ endpoint: candidate.id, provider: candidate.provider.slug, outcome: "success", latency_ms: ended - started, byok: isByok })
            return { candidate, result, isByok, reports }
          }
          const failure = Option.getOrUndefined(Exit.findErrorOption(exit))
          if (failure === undefined) return yield* Effect.die(Exit.isFailure(exit) ? exit.cause : "attempt ended without a result")
          if (failure.countsAgainstEndpoint) health.failure(candidate.id, ended)
          reports.push({
            endpoint: candidate.id,
            provider: candidate.provider.slug,
            outcome: "failure",
            reason: failure.reason._tag,
            status: failure.status,
            message: failure.message,
            latency_ms: ended - started,
            byok: isByok
          })
          yield* Effect.logDebug("upstream attempt failed").pipe(
            Effect.annotateLogs({ endpoint: candidate.id, reason: failure.reason._tag, key: caller.keyId })
          )
          last = failure
          if (failure.failureClass === "stop") break
        }
        const error = UpstreamFailure.toApiError(last!)
        return yield* Effect.fail(
          Object.assign(error, { metadata: { ...(error.metadata ?? {}), attempts: reports } }) as ApiError
        )
      })

      const create = Effect.fn("Embeddings.create")(function*(
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        options: CallOptions
      ) {
        const startedAt = yield* Clock.currentTimeMillis
        const prepared = yield* prepare(caller, request, options)
        const allByok = prepared.plan.attempts.every((c) => prepared.own.has(c.provider.slug))
        const reservation = yield* accounting.reserve({
          keyId: caller.keyId,
          workspaceId: caller.workspaceId,
          amountNanos: prepared.worstNanos,
          byok: allByok
        })
        const outcome = yield* execute(caller, request, prepared).pipe(
          Effect.timeoutOrElse({
            duration: Duration.millis(config.requestTimeoutMs),
            orElse: () => Effect.fail(new RequestTimeout({ message: `The request did not finish within ${config.requestTimeoutMs} ms` }))
          }),
          Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : accounting.release(reservation))
        )
        const { candidate, result, isByok } = outcome
        const images = UpstreamInput.imageCount(prepared.input)
        const upstreamAtto = Cost.compute(candidate.endpoint.pricing, { prompt_tokens: result.promptTokens, images }).total
        const id = generationId()
        const settlement = yield* accounting.settle(reservation, {
          generationId: id,
          model: candidate.endpoint.model,
          provider: candidate.provider.slug,
          promptTokens: result.promptTokens,
          totalTokens: result.totalTokens,
          costNanos: nanosOf(upstreamAtto),
          isByok,
          latencyMs: (yield* Clock.currentTimeMillis) - startedAt
        })
        const dimensions = widthOf(result.embeddings)
        const primary = prepared.plan.attempts[0]!
        const primaryDimensions = request.dimensions ?? primary.endpoint.dimensions
        const changed = primary.id !== candidate.id &&
          (primaryDimensions !== dimensions || primary.endpoint.quantization !== candidate.endpoint.quantization)
        const sorted = [...result.embeddings].sort((a, b) => a.index - b.index)
        return {
          id,
          model: candidate.endpoint.model,
          provider: candidate.provider.slug,
          endpoint: candidate.id,
          data: sorted,
          encoding: request.encoding_format ?? "float",
          dimensions,
          promptTokens: result.promptTokens,
          totalTokens: result.totalTokens,
          modalityTokens: result.modalityTokens,
          costNanos: settlement.costNanos,
          upstreamCostAtto: upstreamAtto,
          isByok,
          plan: prepared.plan,
          attempts: outcome.reports,
          vectorSpaceChange: changed
            ? {
              primary: primary.id,
              primary_dimensions: primaryDimensions,
              primary_quantization: primary.endpoint.quantization,
              served_by: candidate.id,
              dimensions,
              quantization: candidate.endpoint.quantization
            }
            : undefined
        } satisfies Served
      })

      const dryRun = Effect.fn("Embeddings.dryRun")(function*(
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        options: CallOptions
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
          estimatedCostNanos: nanosOf(estimate)
        } satisfies DryRun
      })

      return Embeddings.of({ create, dryRun })
    })
  )
}
