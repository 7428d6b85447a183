import * as EmbeddingsError from "@switchyard/core/errors/EmbeddingsError"
import type { ApiError } from "@switchyard/core/schema/ApiError"
import * as BatchLine from "@switchyard/core/schema/BatchLine"
import type * as EmbeddingRequestSchema from "@switchyard/core/schema/EmbeddingRequest"
type EmbeddingRequest = EmbeddingRequestSchema.EmbeddingRequest
import { Context, Effect, Layer } from "effect"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { Embeddings } from "../embeddings/Embeddings.ts"
import * as EmbeddingsAnswer from "../embeddings/Answer.ts"
import type { Served } from "../embeddings/Settlement.ts"
import { resolveModel } from "../pipeline/Route.ts"
import * as RerankAnswer from "../rerank/Answer.ts"
import * as Span from "../instrumentation/Span.ts"
import { Rerank } from "../rerank/Rerank.ts"
import {
  type BatchIdentity,
  decodeEmbeddings,
  decodeRerank,
  errorOutcome,
  generationId,
  invalidOutcome,
  isText,
  type LineOutcome,
  requestId
} from "./BatchLines.ts"

/**
 * Runs one input line as the live endpoint would run its body, with the batch creator's key: the
 * same decoding, model names, routing, cache, limits and accounting; its answer's body is the live
 * answer's.
 */
export class LineRunner extends Context.Service<LineRunner, {
  readonly run: (batch: BatchIdentity, line: number, text: string) => Effect.Effect<LineOutcome>
  /**
   * Runs lines together: embeddings lines of text input that differ only in their input share
   * upstream calls (`Embeddings.createMany`), each still its own generation; the others run one
   * by one. The outcomes are in the lines' order.
   */
  readonly runMany: (
    batch: BatchIdentity,
    lines: ReadonlyArray<{ readonly line: number; readonly text: string }>,
    options: {
      readonly concurrency: number
      /** Once true, no further line or group starts (those started finish); theirs is no outcome. */
      readonly stopped: () => boolean
    }
  ) => Effect.Effect<ReadonlyArray<LineOutcome | undefined>>
}>()("@switchyard/server/batches/LineRunner") {
  static readonly layer = Layer.effect(
    LineRunner,
    Effect.gen(function*() {
      const embeddings = yield* Embeddings
      const rerank = yield* Rerank
      const resolved = resolveModel(yield* CurrentCatalog)

      const serve = (
        batch: BatchIdentity,
        line: number,
        body: unknown
      ): Effect.Effect<{ readonly json: string; readonly costNanos: bigint; readonly provider: string }, ApiError> => {
        const id = generationId(batch, line)
        if (batch.endpoint === "/v1/embeddings") {
          return Effect.gen(function*() {
            const payload = yield* resolved(yield* decodeEmbeddings(body))
            const served = yield* embeddings.create(batch.caller, payload, { generationId: id, waitForMemory: true }).pipe(
              Effect.mapError(EmbeddingsError.toApiError)
            )
            return { json: EmbeddingsAnswer.text(served, payload, false), costNanos: served.costNanos, provider: served.provider }
          })
        }
        return Effect.gen(function*() {
          const payload = yield* resolved(yield* decodeRerank(body))
          const served = yield* rerank.create(batch.caller, payload, { generationId: id, waitForMemory: true }).pipe(
            Effect.mapError(EmbeddingsError.toApiError)
          )
          return { json: JSON.stringify(RerankAnswer.body(served, payload, false)), costNanos: served.costNanos, provider: served.provider }
        })
      }

      const run = (batch: BatchIdentity, line: number, text: string): Effect.Effect<LineOutcome> =>
        Effect.suspend(() => {
          const started = performance.now()
          return runLine(batch, line, text).pipe(
            Effect.tap((outcome) => accessLine(batch, line, outcome, started)),
            ofBatch(batch, "batch.line", () => ({ "switchyard.batch_line": line }))
          )
        })

      const runLine = (batch: BatchIdentity, line: number, text: string): Effect.Effect<LineOutcome> => {
        const parsed = BatchLine.parse(text, line, batch.endpoint)
        if (parsed._tag === "Invalid") return Effect.succeed(invalidOutcome(batch, line, parsed.invalid))
        const { customId, body } = parsed.request
        return serve(batch, line, body).pipe(
          Effect.match({
            onSuccess: ({ costNanos, json, provider }): LineOutcome => ({
              served: true,
              status: 200,
              line: BatchLine.outputLine(requestId(batch, line), customId, generationId(batch, line), json),
              costNanos,
              provider
            }),
            onFailure: (error) => errorOutcome(batch, line, customId, error)
          })
        )
      }
      const runMany = (
        batch: BatchIdentity,
        lines: ReadonlyArray<{ readonly line: number; readonly text: string }>,
        { concurrency, stopped }: { readonly concurrency: number; readonly stopped: () => boolean }
      ): Effect.Effect<ReadonlyArray<LineOutcome | undefined>> =>
        Effect.gen(function*() {
          const outcomes: Array<LineOutcome | undefined> = lines.map(() => undefined)
          const single: Array<number> = []
          const groups = new Map<string, Array<{ readonly index: number; readonly customId: string; readonly request: EmbeddingRequest }>>()
          if (batch.endpoint !== "/v1/embeddings") single.push(...lines.keys())
          else {
            for (const [index, { line, text }] of lines.entries()) {
              const parsed = BatchLine.parse(text, line, batch.endpoint)
              if (parsed._tag === "Invalid") {
                outcomes[index] = invalidOutcome(batch, line, parsed.invalid)
                continue
              }
              const { customId, body } = parsed.request
              const decoded = yield* Effect.result(Effect.flatMap(decodeEmbeddings(body), resolved))
              if (decoded._tag === "Failure") {
                outcomes[index] = errorOutcome(batch, line, customId, decoded.failure)
                continue
              }
              const request = decoded.success
              const { input, ...rest } = request
              if (!isText(input)) {
                single.push(index)
                continue
              }
              const key = JSON.stringify(rest)
              const group = groups.get(key) ?? []
              group.push({ index, customId, request })
              groups.set(key, group)
            }
          }
          const many = Effect.forEach(groups.values(), (group) => {
            if (stopped()) return Effect.void
            const started = performance.now()
            return Effect.flatMap(
              embeddings.createMany(batch.caller, group.map(({ index, request }) => ({ request, generationId: generationId(batch, lines[index]!.line) }))),
              (results) =>
                Effect.forEach(group.entries(), ([k, { index, customId, request }]) => {
                  const result = results[k]!
                  const line = lines[index]!.line
                  const outcome = result._tag === "Success"
                    ? servedLater(batch, line, customId, result.success, request)
                    : errorOutcome(batch, line, customId, EmbeddingsError.toApiError(result.failure))
                  outcomes[index] = outcome
                  return accessLine(batch, line, outcome, started)
                }, { discard: true })
            ).pipe(ofBatch(batch, "batch.lines", () => ({
              "switchyard.batch_first_line": lines[group[0]!.index]!.line,
              "switchyard.batch_lines": group.length
            })))
          }, { concurrency, discard: true })
          const each = Effect.forEach(single, (index) =>
            stopped() ? Effect.void : Effect.flatMap(run(batch, lines[index]!.line, lines[index]!.text), (outcome) =>
              Effect.sync(() => {
                outcomes[index] = outcome
              })), { concurrency, discard: true })
          yield* Effect.all([many, each], { concurrency: 2, discard: true })
          return outcomes
        })

      return LineRunner.of({ run, runMany })
    })
  )
}

// Every log line and span of a batch's line carries the batch's id; each line or group of
// lines has a span of its own (a batch has no HTTP request span to hang them under).
const ofBatch = (batch: BatchIdentity, name: string, attributes: () => Record<string, unknown>) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  self.pipe(
    // A batch's lines are a trace of their own: no request is above them.
    Span.within(name, () => ({ "switchyard.batch_id": batch.id, ...attributes() }), { root: true }),
    Effect.annotateSpans({ "switchyard.batch_id": batch.id }),
    Effect.annotateLogs({ batch_id: batch.id })
  )

/**
 * The line's own line, at `debug`: what the live endpoint's access line says, with the batch
 * and the line. A batch logs as a batch at `info` (BatchRunner.ts): started, finished.
 */
const accessLine = (batch: BatchIdentity, line: number, outcome: LineOutcome, started: number) =>
  Effect.logDebug("batch line").pipe(Effect.annotateLogs({
    batch_id: batch.id,
    line,
    path: batch.endpoint,
    status: outcome.status,
    duration_ms: Math.round((performance.now() - started) * 10) / 10,
    ...(outcome.served ? { generation_id: generationId(batch, line) } : {})
  }))

/**
 * A served line of a group, whose output line is written out when it is read, as its unit is
 * written: until then the line holds its share of the upstream's answer, not a 30 KB string of
 * its own that would live as long as the unit, past the young generation, for a full
 * collection to free.
 */
const servedLater = (batch: BatchIdentity, line: number, customId: string, served: Served, request: EmbeddingRequest): LineOutcome => {
  const id = requestId(batch, line)
  const generation = generationId(batch, line)
  return {
    served: true,
    status: 200,
    costNanos: served.costNanos,
    provider: served.provider,
    get line() {
      return BatchLine.outputLine(id, customId, generation, EmbeddingsAnswer.text(served, request, false))
    }
  }
}
