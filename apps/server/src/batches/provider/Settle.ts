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

/** A line's served answer at the provider batch's provider: charged, and its output line. */
const withProvider = (outcome: LineOutcome, part: ProviderBatchRow): LineOutcome => ({ ...outcome, provider: part.provider, mode: "provider_batch" })

/**
 * A line the provider batch answered: read as the live answer is (by the batch API's adapter),
 * charged at the batch price under the line's generation id (once: a line settled before is not
 * charged again). `undefined` when the answer says the line is to run live instead.
 */
const serve = (
  run: Runtime,
  batch: BatchIdentity,
  part: ProviderBatchRow,
  entry: { readonly line: number; readonly customId: string; readonly request: EmbeddingRequestSchema.EmbeddingRequest },
  lookup: (customId: string) => BatchProvider.Result | undefined,
  context: { readonly settled: ReadonlyMap<string, bigint>; readonly latencyMs: number; readonly stop: ReturnType<typeof stopOf> }
): Effect.Effect<LineOutcome | "live" | undefined> =>
  Effect.gen(function*() {
    const { line, customId, request } = entry
    const prepared = yield* run.prepare(batch.caller, request, {}).pipe(Effect.mapError(EmbeddingsError.toApiError))
    const candidate = prepared.plan.attempts.find((c) => c.id === part.endpoint)
    if (candidate === undefined) {
      return yield* Effect.fail<ApiError>(new ServiceUnavailable({
        message: `The endpoint ${part.endpoint} that ran this line's provider batch is no longer on its route`
      }))
    }
    const { width, upstream } = upstreamRequestOf(request, prepared, candidate)
    const failed = (error: UpstreamError.UpstreamError) => upstreamFailure({ provider: candidate.provider.slug, endpoint: candidate.id }, error)
    const answer = yield* run.apis[part.api as Catalog.BatchApi].answer(upstreamId(line), upstream, lookup).pipe(Effect.mapError(failed))
    if (answer._tag === "Missing") return unanswered(batch, line, customId, context.stop)
    if (answer._tag === "Failed") {
      // Busy or broken at the provider: the line is tried live. Anything else is its own failure.
      if (answer.status === 0 || answer.status === 408 || answer.status === 429 || answer.status >= 500) return "live"
      const error = UpstreamAnswer.fromResponse({ status: answer.status, headers: {}, body: JSON.stringify(answer.body ?? null) }, yield* Clock.currentTimeMillis)
      return errorOutcome(batch, line, customId, upstreamFailure(part, UpstreamError.atProvider(part.provider)(error)))
    }
    const result = answer.result
    const wrong = result.embeddings.find((e) => VectorEncoding.widthOf(e.embedding) !== width)
    if (wrong !== undefined) return yield* Effect.fail(failed(UpstreamError.widthMismatch(width, VectorEncoding.widthOf(wrong.embedding))))
    const price = Catalog.batchPricingOf(candidate.endpoint.pricing) ?? candidate.endpoint.pricing
    const atto = Cost.compute(price, { prompt_tokens: result.promptTokens, images: 0 }).total
    const id = generationId(batch, line)
    const report: Fallback.AttemptReport = {
      endpoint: candidate.id,
      provider: candidate.provider.slug,
      outcome: "success",
      latency_ms: context.latencyMs,
      byok: false
    }
    const costNanos = context.settled.get(id) ?? (yield* charge(run, batch, part, {
      id,
      model: candidate.endpoint.model,
      provider: candidate.provider.slug,
      result,
      nanos: nanosOf(atto),
      latencyMs: context.latencyMs,
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
      ...(result.tokensEstimated === true ? { tokensEstimated: true } : {}),
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
  }).pipe(
    Effect.catch((error: ApiError) => Effect.succeed(errorOutcome(batch, entry.line, entry.customId, error))),
    Effect.map((outcome) => typeof outcome === "object" ? withProvider(outcome, part) : outcome)
  )

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
      attempts: AttemptRecord.fromReports([line.report], part.upstream_batch_id ?? undefined, { mode: "provider_batch" })
    })
    return settlement.costNanos
  }).pipe(Effect.mapError(EmbeddingsError.toApiError))

/**
 * A line the provider batch has no result for: left out (the batch was cancelled here), expired
 * (its window passed here), or run live (the job failed, expired, skipped it, or could no longer
 * be read at the provider).
 */
const unanswered = (batch: BatchIdentity, line: number, customId: string, stop: ReturnType<typeof stopOf>): LineOutcome | "live" | undefined => {
  // Not run: a cancel leaves it out, as a cancelled unit does; an expired window says so.
  if (stop === "cancel") return undefined
  if (stop === "expire") return { served: false, status: 0, line: BatchLine.expiredLine(requestId(batch, line), customId) }
  return "live"
}

/** The provider batch's results, by the key of their request. */
const resultsOf = (
  run: Runtime,
  part: ProviderBatchRow,
  upstream: BatchProvider.UpstreamBatch | undefined,
  connection: EmbeddingProvider.Connection | undefined
) =>
  Effect.gen(function*() {
    const results = new Map<string, BatchProvider.Result>()
    if (upstream !== undefined && connection !== undefined) {
      for (const r of yield* run.apis[part.api as Catalog.BatchApi].results(connection, upstream)) results.set(r.customId, r)
    }
    return results
  })

/**
 * The provider batch ended (or was given up on, `given` saying why): its results become the lines'
 * outcomes, written into the batch's files. Lines it did not serve, and did not fail for a reason
 * of their own, run live now (the next provider of their route if its own fails them again): none
 * is lost, none is charged twice (a line is charged under its generation id once).
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
    if (given !== undefined) yield* Effect.logWarning("provider batch given up on; its lines run live").pipe(Effect.annotateLogs({ why: given }))
    const read = yield* Effect.result(resultsOf(run, part, upstream, connection))
    if (Result.isFailure(read)) {
      yield* Effect.logWarning("provider batch results unreadable; its lines run live").pipe(
        Effect.annotateLogs({ provider: part.provider, reason: read.failure.reason._tag })
      )
    }
    const results = Result.isSuccess(read) ? read.success : new Map<string, BatchProvider.Result>()
    const now = yield* Clock.currentTimeMillis
    const entries = yield* linesOf(run, row, part)
    const context = {
      settled: yield* run.parts.settled(entries.map((e) => generationId(batch, e.line))),
      latencyMs: Math.max(0, now - Number(part.created_at)),
      stop: stopOf(row)
    }
    const outcomes = yield* Effect.forEach(entries, ({ line, text }) =>
      Effect.gen(function*() {
        const found = yield* requestOf(run, batch, line, text)
        if (Result.isFailure(found)) return errorOutcome(batch, line, BatchLine.customIdOf(text) ?? null, found.failure)
        return yield* serve(run, batch, part, { line, ...found.success }, (key) => results.get(key), context)
      }), { concurrency: 16 })
    const again = entries.filter((_, i) => outcomes[i] === "live")
    const live = again.length === 0 ? [] : yield* run.lineRunner.runMany(batch, again, { concurrency: 16, stopped: () => false })
    let k = 0
    const all = outcomes.map((o) => (o === "live" ? live[k++] : o))
    yield* write(run, row, part, entries, all, upstream?.state ?? (context.stop === "cancel" ? "cancelled" : context.stop === "expire" ? "expired" : "failed"))
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
    yield* write(run, row, part, entries, outcomes, "live")
  })
