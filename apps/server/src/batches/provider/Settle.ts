import * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as Cost from "@switchyard/core/catalog/Cost"
import type { EmbeddingProvider } from "@switchyard/core"
import * as EmbeddingsError from "@switchyard/core/errors/EmbeddingsError"
import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import { type ApiError, ServiceUnavailable } from "@switchyard/core/schema/ApiError"
import * as BatchLine from "@switchyard/core/schema/BatchLine"
import type * as EmbeddingRequestSchema from "@switchyard/core/schema/EmbeddingRequest"
import * as AttemptRecord from "@switchyard/core/upstream/AttemptRecord"
import * as Fallback from "@switchyard/core/upstream/Fallback"
import * as UpstreamAnswer from "@switchyard/core/upstream/UpstreamAnswer"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Effect, Result } from "effect"
import * as EmbeddingsAnswer from "../../embeddings/Answer.ts"
import type { Served } from "../../embeddings/Embeddings.ts"
import * as Span from "../../instrumentation/Span.ts"
import { nanosOf } from "../../pipeline/HeldAttempts.ts"
import * as OpenAiCompatible from "../../providers/OpenAiCompatible.ts"
import * as UpstreamInput from "../../providers/UpstreamInput.ts"
import * as VectorEncoding from "../../providers/VectorEncoding.ts"
import type { BatchRow } from "../../store/batches/BatchStore.ts"
import type { ProviderBatchRow } from "../../store/batches/ProviderBatchStore.ts"
import { type BatchIdentity, errorOutcome, generationId, identityOf, type LineOutcome, requestId } from "../BatchLines.ts"
import { linesOf, write } from "./Files.ts"
import { requestOf, type Runtime, stopOf, upstreamId, upstreamRequestOf } from "./Runtime.ts"

/** A line's failure at the provider batch's provider and endpoint, as the live call's would be. */
const upstreamFailure = (part: { readonly provider: string; readonly endpoint: string }, error: UpstreamError.UpstreamError) =>
  EmbeddingsError.toApiError(new Fallback.UpstreamFailed({ error, provider: part.provider, endpoint: part.endpoint, attempts: [] }))

/**
 * A line the provider batch answered with 200: read as the live answer is, charged at the batch
 * price under the line's generation id (once: a line settled before is not charged again).
 */
const serve = (
  run: Runtime,
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
    const prepared = yield* run.prepare(batch.caller, request, {}).pipe(Effect.mapError(EmbeddingsError.toApiError))
    const candidate = prepared.plan.attempts.find((c) => c.id === part.endpoint)
    if (candidate === undefined) {
      return yield* Effect.fail<ApiError>(new ServiceUnavailable({
        message: `The endpoint ${part.endpoint} that ran this line's provider batch is no longer on its route`
      }))
    }
    const { width, upstream } = upstreamRequestOf(request, prepared, candidate)
    const failed = (error: UpstreamError.UpstreamError) => upstreamFailure({ provider: candidate.provider.slug, endpoint: candidate.id }, error)
    const result = yield* OpenAiCompatible.resultOfBody(upstream, body).pipe(Effect.mapError(failed))
    const wrong = result.embeddings.find((e) => VectorEncoding.widthOf(e.embedding) !== width)
    if (wrong !== undefined) return yield* Effect.fail(failed(UpstreamError.widthMismatch(width, VectorEncoding.widthOf(wrong.embedding))))
    const price = Catalog.batchPricingOf(candidate.endpoint.pricing) ?? candidate.endpoint.pricing
    const atto = Cost.compute(price, { prompt_tokens: result.promptTokens, images: 0 }).total
    const id = generationId(batch, line)
    const report: Fallback.AttemptReport = {
      endpoint: candidate.id,
      provider: candidate.provider.slug,
      outcome: "success",
      latency_ms: latencyMs,
      byok: false
    }
    const costNanos = settled.get(id) ?? (yield* charge(run, batch, part, {
      id,
      model: candidate.endpoint.model,
      provider: candidate.provider.slug,
      result,
      nanos: nanosOf(atto),
      latencyMs,
      report
    }))
    const served: Served = {
      id,
      model: candidate.endpoint.model,
      provider: candidate.provider.slug,
      endpoint: candidate.id,
      data: [...result.embeddings].sort((a, b) => a.index - b.index),
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

/** Charges a served line: held and settled at once, under its generation id; what it cost. */
const charge = (
  run: Runtime,
  batch: BatchIdentity,
  part: ProviderBatchRow,
  line: {
    readonly id: string
    readonly model: string
    readonly provider: string
    readonly result: { readonly promptTokens: number; readonly totalTokens: number }
    readonly nanos: bigint
    readonly latencyMs: number
    readonly report: Fallback.AttemptReport
  }
) =>
  Effect.gen(function*() {
    const hold = yield* run.accounting.reserve({
      keyId: batch.caller.keyId,
      workspaceId: batch.caller.workspaceId,
      amountNanos: line.nanos,
      byok: false
    })
    const settlement = yield* run.accounting.settle(hold, {
      generationId: line.id,
      model: line.model,
      provider: line.provider,
      promptTokens: line.result.promptTokens,
      totalTokens: line.result.totalTokens,
      costNanos: line.nanos,
      isByok: false,
      latencyMs: line.latencyMs,
      attempts: AttemptRecord.fromReports([line.report], part.upstream_batch_id ?? undefined)
    })
    return settlement.costNanos
  }).pipe(Effect.mapError(EmbeddingsError.toApiError))

/** The outcome of a line the provider batch has no result for: left out, expired, or failed with why. */
const unanswered = (
  batch: BatchIdentity,
  part: ProviderBatchRow,
  line: number,
  customId: string,
  ended: { readonly stop: ReturnType<typeof stopOf>; readonly upstream: BatchProvider.UpstreamBatch | undefined; readonly given: string | undefined }
): LineOutcome | undefined => {
  const { stop, upstream, given } = ended
  // Not run: a cancel leaves it out, as a cancelled unit does; an expired window says so.
  if (stop === "cancel") return undefined
  if (stop === "expire" || upstream?.state === "expired") {
    return { served: false, status: 0, line: BatchLine.expiredLine(requestId(batch, line), customId) }
  }
  const why = given ?? upstream?.errors[0]?.message ??
    `the provider batch ended ${upstream?.state ?? "without an answer"} with no result for this line`
  return errorOutcome(batch, line, customId, upstreamFailure(part, UpstreamError.invalidResponse(why)))
}

/** The provider batch's results, by the `custom_id` of their line. */
const resultsOf = (
  run: Runtime,
  part: ProviderBatchRow,
  upstream: BatchProvider.UpstreamBatch | undefined,
  connection: EmbeddingProvider.Connection | undefined
) =>
  Effect.gen(function*() {
    const api = run.apis[part.api as Catalog.BatchApi]
    const results = new Map<string, BatchProvider.Result>()
    if (upstream !== undefined && connection !== undefined) {
      for (const fileId of [upstream.outputFileId, upstream.errorFileId]) {
        if (fileId === undefined) continue
        for (const r of yield* api.results(connection, fileId)) results.set(r.customId, r)
      }
    }
    return results
  })

/**
 * The provider batch ended (or was given up on, `given` saying why): its results become the lines'
 * outcomes, written into the batch's files.
 */
export const settle = (
  run: Runtime,
  row: BatchRow,
  part: ProviderBatchRow,
  upstream: BatchProvider.UpstreamBatch | undefined,
  connection: EmbeddingProvider.Connection | undefined,
  given?: string
) =>
  Effect.gen(function*() {
    const batch = identityOf(row)
    const results = yield* resultsOf(run, part, upstream, connection)
    const now = yield* Clock.currentTimeMillis
    const latencyMs = Math.max(0, now - Number(part.created_at))
    const entries = yield* linesOf(run, row, part)
    const settled = yield* run.parts.settled(entries.map((e) => generationId(batch, e.line)))
    const stop = stopOf(row)
    const outcomes = yield* Effect.forEach(entries, ({ line, text }) =>
      Effect.gen(function*() {
        const found = yield* requestOf(run, batch, line, text)
        if (Result.isFailure(found)) return errorOutcome(batch, line, BatchLine.customIdOf(text) ?? null, found.failure)
        const read = found.success
        const result = results.get(upstreamId(line))
        if (result === undefined) return unanswered(batch, part, line, read.customId, { stop, upstream, given })
        if (result.status === 200) return yield* serve(run, batch, part, line, read.customId, read.request, result.body, settled, latencyMs)
        // The provider's failure of this line, mapped as the live call's would be.
        const error = UpstreamAnswer.fromResponse(
          { status: result.status === 0 ? 500 : result.status, headers: {}, body: JSON.stringify(result.body ?? null) },
          now
        )
        return errorOutcome(batch, line, read.customId, upstreamFailure(part, UpstreamError.atProvider(part.provider)(error)))
      }), { concurrency: 16 })
    yield* write(run, row, part, entries, outcomes)
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
export const runLive = (run: Runtime, row: BatchRow, part: ProviderBatchRow) =>
  Effect.gen(function*() {
    const batch = identityOf(row)
    const entries = yield* linesOf(run, row, part)
    const outcomes = yield* run.lineRunner.runMany(batch, entries, { concurrency: 16, stopped: () => false })
    yield* write(run, row, part, entries, outcomes)
  })
