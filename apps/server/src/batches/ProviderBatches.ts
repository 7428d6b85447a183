import * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as Cost from "@switchyard/core/catalog/Cost"
import * as Money from "@switchyard/core/catalog/Money"
import * as EmbeddingsError from "@switchyard/core/errors/EmbeddingsError"
import { type ApiError, BadRequest, ServiceUnavailable } from "@switchyard/core/schema/ApiError"
import * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import type { EmbeddingProvider } from "@switchyard/core"
import * as EndpointParameters from "@switchyard/core/routing/EndpointParameters"
import * as BatchLine from "@switchyard/core/schema/BatchLine"
import * as EmbeddingRequestSchema from "@switchyard/core/schema/EmbeddingRequest"
import { Accounting, type Reservation } from "@switchyard/core/store/Accounting"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import * as AttemptRecord from "@switchyard/core/upstream/AttemptRecord"
import * as Fallback from "@switchyard/core/upstream/Fallback"
import * as UpstreamAnswer from "@switchyard/core/upstream/UpstreamAnswer"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Cause, Clock, Config, Context, Duration, Effect, Layer, Option, Result, Schema } from "effect"
import { HttpApiError } from "effect/http-api"
import * as Crypto from "node:crypto"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import type { Served } from "../embeddings/Embeddings.ts"
import { EndpointHealth } from "../pipeline/EndpointHealth.ts"
import * as Preparation from "../embeddings/Preparation.ts"
import { nanosOf } from "../pipeline/HeldAttempts.ts"
import * as UpstreamInput from "../providers/UpstreamInput.ts"
import { Workspaces } from "../pipeline/Workspaces.ts"
import * as EmbeddingsAnswer from "../embeddings/Answer.ts"
import { resolveModel } from "../pipeline/Route.ts"
import * as SchemaErrorsLive from "../http/SchemaErrorsLive.ts"
import { GatewayMetrics } from "../observability/GatewayMetrics.ts"
import * as Span from "../instrumentation/Span.ts"
import { connectionOf } from "../providers/Adapters.ts"
import * as Azure from "../providers/Azure.ts"
import * as OpenAiBatch from "../providers/OpenAiBatch.ts"
import * as OpenAiCompatible from "../providers/OpenAiCompatible.ts"
import * as VectorEncoding from "../providers/VectorEncoding.ts"
import { type BatchRow, BatchStore } from "../store/BatchStore.ts"
import { GatewayProcess } from "../store/GatewayProcesses.ts"
import * as FileChunks from "../store/FileChunks.ts"
import { type BatchIdentity, generationId, type LineOutcome, LineRunner, requestId, statusOf } from "./LineRunner.ts"
import { type NewProviderBatch, type ProviderBatchRow, ProviderBatchStore } from "../store/ProviderBatchStore.ts"

const ProviderBatchesConfig = Config.all({
  /** How often a provider batch is asked how it stands. */
  pollMs: Config.Int("SWITCHYARD_PROVIDER_BATCH_POLL_MS").pipe(Config.withDefault(60_000)),
  /** How often a replica looks for provider batches due (the batch runner's poll). */
  loopMs: Config.Int("SWITCHYARD_BATCH_POLL_MS").pipe(Config.withDefault(1_000)),
  /** How long one step on a provider batch keeps its claim at most. */
  leaseMs: Config.Int("SWITCHYARD_BATCH_LEASE_MS").pipe(Config.withDefault(30_000))
})

/** How long a cancelled provider batch is waited for (OpenAI's cancel takes up to 10 minutes). */
const cancelWaitMs = 10 * 60 * 1000

/** Submissions refused this many times in a row run their lines live instead. */
const maxSubmitFailures = 3

/** A unit's lines split: those that run live now, and the provider batches the others go to. */
export interface Diverted<L> {
  readonly live: ReadonlyArray<L>
  readonly providerBatches: ReadonlyArray<NewProviderBatch>
  /** Drops the holds that admitted the diverted lines (once their provider batches are written). */
  readonly release: Effect.Effect<void>
}

/** The `custom_id` of a line in the provider's file. */
const upstreamId = (line: number) => `line-${line}`

const isText = (input: EmbeddingRequestSchema.EmbeddingRequest["input"]): boolean =>
  typeof input === "string" || (Array.isArray(input) && input.length > 0 && input.every((item) => typeof item === "string"))

/**
 * Provider batches: where a batch may (its creator did not ask for live execution only), the lines
 * of a unit whose route's first endpoint has a batch price and a provider with a batch API go to
 * that provider's batch API instead of live calls, one provider batch per unit and endpoint. The
 * runner here submits each (upload, create), polls it, and maps its results back into the batch's
 * output and error files, charging each served line at the endpoint's batch price under the
 * line's generation id. Every step is one claim in the store, so any replica may take the next one,
 * and the provider's ids are stored before they are relied on: a restart polls, it does not submit
 * again.
 */
export class ProviderBatches extends Context.Service<ProviderBatches, {
  readonly divert: <L extends { readonly line: number; readonly text: string }>(
    batch: BatchIdentity & { readonly execution: string },
    lines: ReadonlyArray<L>
  ) => Effect.Effect<Diverted<L>>
}>()("@switchyard/server/batches/ProviderBatches") {
  static readonly layer = Layer.effect(
    ProviderBatches,
    Effect.gen(function*() {
      const config = yield* ProviderBatchesConfig
      const loaded = yield* CurrentCatalog
      const accounting = yield* Accounting
      const store = yield* BatchStore
      const parts = yield* ProviderBatchStore
      const lineRunner = yield* LineRunner
      const metrics = yield* GatewayMetrics
      const prepare = Preparation.make({
        loaded,
        health: yield* EndpointHealth,
        byok: yield* ByokStore,
        workspaces: yield* Workspaces
      })
      const apis: Record<Catalog.BatchApi, BatchProvider.BatchProvider> = { openai: yield* OpenAiBatch.make, azure: yield* Azure.makeBatch }
      const resolved = resolveModel(loaded)
      const decode = Schema.decodeUnknownEffect(EmbeddingRequestSchema.EmbeddingRequest, { errors: "all" })
      const invalidBody = (cause: Schema.SchemaError) =>
        SchemaErrorsLive.transform(new HttpApiError.HttpApiSchemaError({ kind: "Payload", cause }))
      const owner = `provider-batches-${Crypto.randomBytes(8).toString("hex")}`

      /** A line's request, decoded and its model resolved as the live endpoint does; else its error. */
      const requestOf = (batch: BatchIdentity, line: number, text: string) =>
        Effect.gen(function*() {
          const parsed = BatchLine.parse(text, line, batch.endpoint)
          if (parsed._tag === "Invalid") {
            return Result.fail<ApiError>(new BadRequest({ message: parsed.invalid.message }))
          }
          const request = yield* Effect.result(Effect.flatMap(Effect.catch(decode(parsed.request.body), invalidBody), resolved))
          return Result.map(request, (r) => ({ customId: parsed.request.customId, request: r }))
        })

      /** What the endpoint is sent for a request, as the live attempt sends it (under its batch deployment's name, if it has one). */
      const upstreamRequestOf = (
        request: EmbeddingRequestSchema.EmbeddingRequest,
        prepared: Preparation.Prepared,
        candidate: Fallback.Attempt["candidate"]
      ) => {
        const { endpoint, provider } = candidate
        const { width, ...asked } = EndpointParameters.forEndpoint(request, endpoint)
        const input = UpstreamInput.forEndpoint(prepared.input, Catalog.inputModalitiesOf(provider, endpoint))
        const upstream: EmbeddingProvider.UpstreamRequest = {
          upstreamModel: endpoint.batch_upstream_model ?? endpoint.upstream_model,
          encodingFormat: request.encoding_format ?? "float",
          ...asked,
          input
        }
        return { width, upstream }
      }

      // The models some active provider serves at a batch price through a batch API, per catalog
      // snapshot: a line of any other model runs live without being routed twice.
      let batchable: { readonly catalog: Catalog.Catalog; readonly active: ReadonlySet<string>; readonly models: ReadonlySet<string> } | undefined
      const batchModels = () => {
        if (batchable?.catalog === loaded.catalog && batchable.active === loaded.active) return batchable.models
        const models = new Set<string>()
        for (const provider of loaded.catalog.providers) {
          if (Catalog.batchApiOf(provider) === undefined || !loaded.active.has(provider.slug)) continue
          for (const endpoint of provider.endpoints) if (endpoint.pricing.batch !== undefined) models.add(endpoint.model.toLowerCase())
        }
        batchable = { catalog: loaded.catalog, active: loaded.active, models }
        return models
      }

      const divert = <L extends { readonly line: number; readonly text: string }>(
        batch: BatchIdentity & { readonly execution: string },
        lines: ReadonlyArray<L>
      ): Effect.Effect<Diverted<L>> =>
        Effect.gen(function*() {
          const models = batchModels()
          if (batch.endpoint !== "/v1/embeddings" || batch.execution === "live" || models.size === 0) {
            return { live: lines, providerBatches: [], release: Effect.void }
          }
          const live: Array<L> = []
          const holds: Array<Reservation> = []
          const groups = new Map<string, { api: Catalog.BatchApi; provider: string; lines: Array<number>; requests: Array<string> }>()
          yield* Effect.forEach(lines, (entry) =>
            Effect.gen(function*() {
              const target = yield* Effect.result(Effect.gen(function*() {
                const found = yield* requestOf(batch, entry.line, entry.text)
                if (Result.isFailure(found) || !isText(found.success.request.input)) return undefined
                const read = found.success
                if (!models.has(read.request.model.toLowerCase())) return undefined
                const prepared = yield* prepare(batch.caller, read.request, {})
                const first = prepared.attempts[0]
                // The workspace's own credential, or its embeddings cache: the live path's business.
                if (first === undefined || first.byok || prepared.cachePolicy.read) return undefined
                const { provider, endpoint } = first.candidate
                const api = Catalog.batchApiOf(provider)
                const price = Catalog.batchPricingOf(endpoint.pricing)
                if (api === undefined || price === undefined || !loaded.active.has(provider.slug)) return undefined
                if (UpstreamInput.count(prepared.input) > Catalog.batchSizeOf(endpoint)) return undefined
                const { upstream } = upstreamRequestOf(read.request, prepared, first.candidate)
                const body = yield* Effect.option(OpenAiCompatible.requestBody(OpenAiCompatible.dialects[provider.dialect ?? "generic"], upstream))
                if (Option.isNone(body)) return undefined
                // Held at the batch price while the unit runs: a line the limits cannot pay for runs live (and is refused there).
                const worst = Cost.compute(price, { prompt_tokens: prepared.bound.tokens, images: prepared.bound.images }).total
                const hold = yield* accounting.reserve({
                  keyId: batch.caller.keyId,
                  workspaceId: batch.caller.workspaceId,
                  amountNanos: Money.toUnits(worst, 9, "up"),
                  byok: false
                })
                holds.push(hold)
                return { api, provider: provider.slug, endpoint: first.candidate.id, request: apis[api].requestLine(upstreamId(entry.line), body.value) }
              }))
              if (Result.isFailure(target) || target.success === undefined) {
                live.push(entry)
                return
              }
              const t = target.success
              const group = groups.get(t.endpoint) ?? { api: t.api, provider: t.provider, lines: [], requests: [] }
              group.lines.push(entry.line)
              group.requests.push(t.request)
              groups.set(t.endpoint, group)
            }), { concurrency: 16, discard: true })
          // The live lines keep their order (the unit's outcomes follow it).
          const order = new Map(lines.map((entry, i) => [entry.line, i]))
          live.sort((a, b) => order.get(a.line)! - order.get(b.line)!)
          return {
            live,
            providerBatches: [...groups.entries()].map(([endpoint, g]) => ({
              lines: g.lines.sort((a, b) => a - b),
              api: g.api,
              provider: g.provider,
              endpoint,
              requests: `${g.requests.join("\n")}\n`
            })),
            release: Effect.forEach(holds, accounting.release, { discard: true })
          }
        })

      // ---- The provider batches' runner: one step per claim.

      const identityOf = (row: BatchRow): BatchIdentity => ({
        id: row.id,
        createdAtMs: Number(row.created_at),
        endpoint: row.endpoint,
        caller: { keyId: row.key_id, keyHash: row.key_hash, kind: "standard", userId: row.user_id, workspaceId: row.workspace_id }
      })

      const stopOf = (row: BatchRow | undefined) =>
        row === undefined || row.status === "cancelling" || row.status === "cancelled"
          ? "cancel" as const
          : row.expired_at !== null
          ? "expire" as const
          : undefined

      const errorOutcome = (batch: BatchIdentity, line: number, customId: string | null, error: ApiError): LineOutcome => {
        const status = statusOf(error)
        return { served: false, status, line: BatchLine.errorLine(requestId(batch, line), customId, status, error.message) }
      }

      /** A line the provider batch answered with 200: read as the live answer is, charged at the batch price. */
      const serve = (
        batch: BatchIdentity,
        part: ProviderBatchRow,
        line: number,
        customId: string,
        request: EmbeddingRequestSchema.EmbeddingRequest,
        body: unknown,
        settled: ReadonlyMap<string, bigint>,
        latencyMs: number
      ): Effect.Effect<LineOutcome> =>
        Effect.gen(function*() {
          const prepared = yield* prepare(batch.caller, request, {}).pipe(Effect.mapError(EmbeddingsError.toApiError))
          const candidate = prepared.plan.attempts.find((c) => c.id === part.endpoint)
          if (candidate === undefined) {
            return yield* Effect.fail<ApiError>(new ServiceUnavailable({
              message: `The endpoint ${part.endpoint} that ran this line's provider batch is no longer on its route`
            }))
          }
          const { width, upstream } = upstreamRequestOf(request, prepared, candidate)
          const failed = (error: UpstreamError.UpstreamError) =>
            EmbeddingsError.toApiError(
              new Fallback.UpstreamFailed({ error, provider: candidate.provider.slug, endpoint: candidate.id, attempts: [] })
            )
          const result = yield* OpenAiCompatible.resultOfBody(upstream, body).pipe(Effect.mapError(failed))
          const wrong = result.embeddings.find((e) => VectorEncoding.widthOf(e.embedding) !== width)
          if (wrong !== undefined) return yield* Effect.fail(failed(UpstreamError.widthMismatch(width, VectorEncoding.widthOf(wrong.embedding))))
          const price = Catalog.batchPricingOf(candidate.endpoint.pricing) ?? candidate.endpoint.pricing
          const atto = Cost.compute(price, { prompt_tokens: result.promptTokens, images: 0 }).total
          const nanos = nanosOf(atto)
          const id = generationId(batch, line)
          const report: Fallback.AttemptReport = {
            endpoint: candidate.id,
            provider: candidate.provider.slug,
            outcome: "success",
            latency_ms: latencyMs,
            byok: false
          }
          let costNanos = settled.get(id)
          if (costNanos === undefined) {
            const hold = yield* accounting.reserve({
              keyId: batch.caller.keyId,
              workspaceId: batch.caller.workspaceId,
              amountNanos: nanos,
              byok: false
            }).pipe(Effect.mapError(EmbeddingsError.toApiError))
            const settlement = yield* accounting.settle(hold, {
              generationId: id,
              model: candidate.endpoint.model,
              provider: candidate.provider.slug,
              promptTokens: result.promptTokens,
              totalTokens: result.totalTokens,
              costNanos: nanos,
              isByok: false,
              latencyMs,
              attempts: AttemptRecord.fromReports([report], part.upstream_batch_id ?? undefined)
            }).pipe(Effect.mapError(EmbeddingsError.toApiError))
            costNanos = settlement.costNanos
          }
          const sorted = [...result.embeddings].sort((a, b) => a.index - b.index)
          const served: Served = {
            id,
            model: candidate.endpoint.model,
            provider: candidate.provider.slug,
            endpoint: candidate.id,
            data: sorted,
            encoding: request.encoding_format ?? "float",
            dimensions: width,
            promptTokens: result.promptTokens,
            totalTokens: result.totalTokens,
            modalityTokens: result.modalityTokens,
            costNanos,
            upstreamCostAtto: atto,
            isByok: false,
            plan: prepared.plan,
            attempts: [report],
            vectorSpaceChange: undefined,
            cache: { outcome: CachePolicy.outcome(prepared.cachePolicy, UpstreamInput.count(prepared.input), 0), items: 0, tokens: 0, bytes: 0 }
          }
          const json = EmbeddingsAnswer.text(served, request, false)
          return { served: true, status: 200, line: BatchLine.outputLine(requestId(batch, line), customId, id, json), costNanos } satisfies LineOutcome
        }).pipe(Effect.catch((error: ApiError) => Effect.succeed(errorOutcome(batch, line, customId, error))))

      /** The part's lines as they are in the input file. */
      const linesOf = (row: BatchRow, part: ProviderBatchRow) =>
        Effect.gen(function*() {
          const numbers = JSON.parse(part.lines) as ReadonlyArray<number>
          const chunk = yield* store.chunk(row.input_file_id, part.input_seq)
          const texts = Option.isSome(chunk) ? FileChunks.linesOf(chunk.value.data) : []
          return numbers.map((line) => ({ line, text: texts[part.line_offset + (line - part.first_line)] ?? "" }))
        })

      /** Writes the lines' outcomes (a line with none was not run) and their access lines. */
      const write = (
        row: BatchRow,
        part: ProviderBatchRow,
        lines: ReadonlyArray<{ readonly line: number }>,
        results: ReadonlyArray<LineOutcome | undefined>
      ) =>
        Effect.gen(function*() {
          const outcomes = results.filter((o): o is LineOutcome => o !== undefined)
          const served = outcomes.filter((o) => o.served)
          const failed = outcomes.filter((o) => !o.served)
          const written = yield* parts.finish(part, owner, {
            output: served.map((o) => `${o.line}\n`).join(""),
            errors: failed.map((o) => `${o.line}\n`).join(""),
            completed: served.length,
            failed: failed.length,
            costNanos: served.reduce((sum, o) => sum + (o.costNanos ?? 0n), 0n)
          })
          if (!written) return
          metrics.batchLines({ endpoint: row.endpoint, served: served.length, failed: failed.length })
          // Each line's own line at `debug`, as a live-run line has: the batch, the line, its status and generation.
          const batch = identityOf(row)
          yield* Effect.forEach(lines, ({ line }, i) => {
            const outcome = results[i]
            if (outcome === undefined) return Effect.void
            return Effect.logDebug("batch line").pipe(Effect.annotateLogs({
              batch_id: row.id,
              line,
              path: row.endpoint,
              status: outcome.status,
              provider_batch: part.upstream_batch_id ?? "",
              ...(outcome.served ? { generation_id: generationId(batch, line) } : {})
            }))
          }, { discard: true })
        })

      /** The provider batch ended (or was given up on): its results become the lines' outcomes. */
      const finishFrom = (
        row: BatchRow,
        part: ProviderBatchRow,
        upstream: BatchProvider.UpstreamBatch | undefined,
        connection: EmbeddingProvider.Connection | undefined,
        given?: string
      ) =>
        Effect.gen(function*() {
          const api = apis[part.api as Catalog.BatchApi]
          const batch = identityOf(row)
          const results = new Map<string, BatchProvider.Result>()
          if (upstream !== undefined && connection !== undefined) {
            for (const fileId of [upstream.outputFileId, upstream.errorFileId]) {
              if (fileId === undefined) continue
              for (const r of yield* api.results(connection, fileId)) results.set(r.customId, r)
            }
          }
          const now = yield* Clock.currentTimeMillis
          const latencyMs = Math.max(0, now - Number(part.created_at))
          const entries = yield* linesOf(row, part)
          const settled = yield* parts.settled(entries.map((e) => generationId(batch, e.line)))
          const stop = stopOf(row)
          const outcomes = yield* Effect.forEach(entries, ({ line, text }) =>
            Effect.gen(function*() {
              const found = yield* requestOf(batch, line, text)
              if (Result.isFailure(found)) return errorOutcome(batch, line, BatchLine.customIdOf(text) ?? null, found.failure)
              const read = found.success
              const result = results.get(upstreamId(line))
              if (result === undefined) {
                // Not run: a cancel leaves it out, as a cancelled unit does; an expired window says so.
                if (stop === "cancel") return undefined
                if (stop === "expire" || upstream?.state === "expired") {
                  return { served: false, status: 0, line: BatchLine.expiredLine(requestId(batch, line), read.customId) } satisfies LineOutcome
                }
                const why = given ?? upstream?.errors[0]?.message ??
                  `the provider batch ended ${upstream?.state ?? "without an answer"} with no result for this line`
                return errorOutcome(batch, line, read.customId, EmbeddingsError.toApiError(
                  new Fallback.UpstreamFailed({
                    error: UpstreamError.invalidResponse(why),
                    provider: part.provider,
                    endpoint: part.endpoint,
                    attempts: []
                  })
                ))
              }
              if (result.status === 200) return yield* serve(batch, part, line, read.customId, read.request, result.body, settled, latencyMs)
              // The provider's failure of this line, mapped as the live call's would be.
              const error = UpstreamAnswer.fromResponse(
                { status: result.status === 0 ? 500 : result.status, headers: {}, body: JSON.stringify(result.body ?? null) },
                now
              )
              return errorOutcome(batch, line, read.customId, EmbeddingsError.toApiError(
                new Fallback.UpstreamFailed({ error: UpstreamError.atProvider(part.provider)(error), provider: part.provider, endpoint: part.endpoint, attempts: [] })
              ))
            }), { concurrency: 16 })
          yield* write(row, part, entries, outcomes)
        }).pipe(
          // A provider batch's lines are a trace of their own, as a unit's are: their settlements under it.
          Span.within("batch.provider_batch", () => ({
            "switchyard.batch_id": row.id,
            "switchyard.provider_batch": part.upstream_batch_id ?? "",
            "switchyard.batch_lines": (JSON.parse(part.lines) as ReadonlyArray<number>).length,
            "gen_ai.provider.name": part.provider
          }), { root: true }),
          Effect.annotateSpans({ "switchyard.batch_id": row.id }),
          Effect.annotateLogs({ batch_id: row.id })
        )

      /** Submission failed for good: the lines run live, as they would have without a batch API. */
      const runLive = (row: BatchRow, part: ProviderBatchRow) =>
        Effect.gen(function*() {
          const batch = identityOf(row)
          const entries = yield* linesOf(row, part)
          const outcomes = yield* lineRunner.runMany(batch, entries, { concurrency: 16, stopped: () => false })
          yield* write(row, part, entries, outcomes)
        })

      const retryable = (error: UpstreamError.UpstreamError) => UpstreamError.failureClassOf(error.reason) === "next_provider"

      const step = (part: ProviderBatchRow) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const found = yield* store.batchById(part.batch_id)
          const row = Option.getOrUndefined(found)
          if (row === undefined) return yield* parts.finish(part, owner, { output: "", errors: "", completed: 0, failed: 0, costNanos: 0n })
          const stop = stopOf(row)
          const provider = loaded.catalog.providers.find((p) => p.slug === part.provider)
          const api = apis[part.api as Catalog.BatchApi]
          if (provider === undefined || api === undefined) return yield* finishFrom(row, part, undefined, undefined)
          const connection = connectionOf(provider, loaded.credentials.get(provider.slug))
          const later = (ms: number, changes: Partial<Parameters<typeof parts.update>[2]> = {}) =>
            parts.update(part, owner, { status: part.status, nextPollAt: now + ms, ...changes })

          if (part.status === "submitting") {
            if (stop !== undefined && part.upstream_batch_id === null) return yield* finishFrom(row, part, undefined, undefined)
            const submitted = yield* Effect.result(Effect.gen(function*() {
              let fileId = part.upstream_file_id
              let existing: BatchProvider.UpstreamBatch | undefined
              if (fileId === null) {
                fileId = yield* api.upload(connection, `${part.batch_id}-${part.seq}.jsonl`, part.requests ?? "")
                // Kept before the batch is made: a restart in between finds the batch made on it.
                yield* parts.update(part, owner, { status: "submitting", nextPollAt: now, upstreamFileId: fileId, keepClaim: true })
              } else {
                existing = yield* api.find(connection, fileId)
              }
              return existing ?? (yield* api.create(connection, fileId, { switchyard_batch: part.batch_id, switchyard_part: String(part.seq) }))
            }))
            if (Result.isSuccess(submitted)) {
              const upstream = submitted.success
              yield* parts.update(part, owner, {
                status: "running",
                nextPollAt: now + config.pollMs,
                upstreamBatchId: upstream.id,
                upstreamStatus: upstream.state,
                failures: 0
              })
              return
            }
            if (submitted.failure._tag !== "UpstreamError") return yield* Effect.fail(submitted.failure)
            const failures = part.failures + 1
            if (!retryable(submitted.failure) || failures >= maxSubmitFailures) {
              yield* Effect.logWarning("provider batch: submission refused, its lines run live").pipe(
                Effect.annotateLogs({ batch_id: part.batch_id, provider: part.provider, reason: submitted.failure.reason._tag })
              )
              return yield* runLive(row, part)
            }
            return yield* later(Math.min(config.pollMs, 1_000 * 2 ** failures), { failures })
          }

          const id = part.upstream_batch_id!
          const upstream = yield* Effect.result(api.retrieve(connection, id))
          if (Result.isFailure(upstream)) {
            const error = upstream.failure
            // A provider that no longer knows its batch (or our key) says so for good: the lines fail.
            const failures = retryable(error) ? part.failures : part.failures + 1
            if (failures >= maxSubmitFailures) {
              return yield* finishFrom(row, part, undefined, undefined, `the provider batch ${id} could not be read: ${UpstreamError.describe(error.reason, part.provider)}`)
            }
            return yield* later(part.status === "cancelling" ? config.loopMs : config.pollMs, { failures })
          }
          const state = upstream.success.state
          if (BatchProvider.ended(state)) return yield* finishFrom(row, part, upstream.success, connection)
          if (part.status === "cancelling") {
            if (now - Number(part.cancel_sent_at ?? now) > cancelWaitMs) return yield* finishFrom(row, part, undefined, undefined)
            return yield* later(config.loopMs, { upstreamStatus: state })
          }
          if (stop !== undefined) {
            // Cancelled (or out of time) here: the provider batch is cancelled too, and its results so far kept.
            yield* Effect.ignore(api.cancel(connection, id))
            return yield* parts.update(part, owner, { status: "cancelling", nextPollAt: now + config.loopMs, cancelSentAt: now, upstreamStatus: "cancelling" })
          }
          return yield* later(config.pollMs, { upstreamStatus: state })
        }).pipe(Effect.asVoid, Effect.annotateLogs({ batch_id: part.batch_id }))

      const loop = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const claimed = yield* parts.claim(owner, now, config.leaseMs)
        if (Option.isNone(claimed)) return false
        const part = claimed.value
        yield* step(part).pipe(
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause)
              ? Effect.failCause(cause)
              : Effect.logError("provider batch step failed", Cause.pretty(cause)).pipe(
                Effect.andThen(Effect.ignore(parts.update(part, owner, { status: part.status, nextPollAt: now + config.pollMs })))
              )
          )
        )
        return true
      }).pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError("provider batch work failed", Cause.pretty(cause)).pipe(Effect.as(false))
        ),
        Effect.flatMap((worked) => (worked ? Effect.void : Effect.sleep(Duration.millis(config.loopMs)))),
        Effect.forever
      )

      // The embedded store with one worker is this process's alone: a claim found at start is a dead one's.
      if ((yield* GatewayProcess).sole) {
        yield* Effect.ignore(parts.releaseAll)
      }
      // Background timing on the system clock, as the batch runner's.
      const systemClock = Effect.provideService(Clock.Clock, Clock.Clock.defaultValue())
      for (let i = 0; i < 2; i++) yield* Effect.forkScoped(systemClock(loop))

      return ProviderBatches.of({ divert })
    })
  )
}
