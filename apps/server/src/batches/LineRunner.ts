import type { CallerShape } from "@switchyard/core/api/Authorization"
import * as EmbeddingsError from "@switchyard/core/errors/EmbeddingsError"
import type { ApiError } from "@switchyard/core/schema/ApiError"
import type * as Batch from "@switchyard/core/schema/Batch"
import * as BatchLine from "@switchyard/core/schema/BatchLine"
import * as EmbeddingRequestSchema from "@switchyard/core/schema/EmbeddingRequest"
type EmbeddingRequest = EmbeddingRequestSchema.EmbeddingRequest
import { RerankRequest } from "@switchyard/core/schema/RerankRequest"
import { Context, Effect, Layer, Schema } from "effect"
import { HttpApiError } from "effect/http-api"
import * as Crypto from "node:crypto"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { Embeddings } from "../embeddings/Embeddings.ts"
import * as EmbeddingsAnswer from "../embeddings/Answer.ts"
import type { Served } from "../embeddings/Settlement.ts"
import { resolveModel } from "../pipeline/Route.ts"
import * as RerankAnswer from "../rerank/Answer.ts"
import * as SchemaErrorsLive from "../http/SchemaErrorsLive.ts"
import * as Span from "../instrumentation/Span.ts"
import { Rerank } from "../rerank/Rerank.ts"

/**
 * A batch's identity as its lines run: its id, when it was made, its endpoint and the key of the
 * caller who made it.
 */
export interface BatchIdentity {
  readonly id: string
  readonly createdAtMs: number
  readonly endpoint: Batch.Endpoint
  readonly caller: CallerShape
}

/** A line run: its output line (served) or its error line. */
export interface LineOutcome {
  readonly served: boolean
  /** The output or error line; a served line of a group may write it out each time it is read (read it once). */
  readonly line: string
  /** What a served line was charged (its generation's cost); absent for an error line. */
  readonly costNanos?: bigint
  /** The live status of an error line (for pacing: 429 and 5xx are worth another try). */
  readonly status: number
}

const digest = (batchId: string, line: number) =>
  Crypto.createHash("sha256").update(`${batchId}:${line}`).digest("base64url").slice(0, 16)

/**
 * The generation id of line `line` of a batch: the batch's creation time and a digest of the
 * batch and the line, so a line run again (after a restart, on another replica) settles under the
 * same id, and the money port charges it once.
 */
export const generationId = (batch: BatchIdentity, line: number) =>
  `gen-${batch.endpoint === "/v1/rerank" ? "rr" : "emb"}-${batch.createdAtMs.toString(36)}-${digest(batch.id, line)}`

/** The `id` of a line's output or error line. */
export const requestId = (batch: BatchIdentity, line: number) => `batch_req_${digest(batch.id, line)}`

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
      const decodeEmbeddings = Schema.decodeUnknownEffect(EmbeddingRequestSchema.EmbeddingRequest, { errors: "all" })
      const decodeRerank = Schema.decodeUnknownEffect(RerankRequest, { errors: "all" })
      const invalidBody = (cause: Schema.SchemaError) =>
        SchemaErrorsLive.transform(new HttpApiError.HttpApiSchemaError({ kind: "Payload", cause }))

      const serve = (batch: BatchIdentity, line: number, body: unknown): Effect.Effect<{ readonly json: string; readonly costNanos: bigint }, ApiError> => {
        const id = generationId(batch, line)
        if (batch.endpoint === "/v1/embeddings") {
          return Effect.gen(function*() {
            const payload = yield* resolved(yield* Effect.catch(decodeEmbeddings(body), invalidBody))
            const served = yield* embeddings.create(batch.caller, payload, { generationId: id, waitForMemory: true }).pipe(
              Effect.mapError(EmbeddingsError.toApiError)
            )
            return { json: EmbeddingsAnswer.text(served, payload, false), costNanos: served.costNanos }
          })
        }
        return Effect.gen(function*() {
          const payload = yield* resolved(yield* Effect.catch(decodeRerank(body), invalidBody))
          const served = yield* rerank.create(batch.caller, payload, { generationId: id, waitForMemory: true }).pipe(
            Effect.mapError(EmbeddingsError.toApiError)
          )
          return { json: JSON.stringify(RerankAnswer.body(served, payload, false)), costNanos: served.costNanos }
        })
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

      const run = (batch: BatchIdentity, line: number, text: string): Effect.Effect<LineOutcome> =>
        Effect.suspend(() => {
          const started = performance.now()
          return runLine(batch, line, text).pipe(
            Effect.tap((outcome) => accessLine(batch, line, outcome, started)),
            ofBatch(batch, "batch.line", () => ({ "switchyard.batch_line": line }))
          )
        })

      const runLine = (batch: BatchIdentity, line: number, text: string): Effect.Effect<LineOutcome> => {
        const id = requestId(batch, line)
        const parsed = BatchLine.parse(text, line, batch.endpoint)
        if (parsed._tag === "Invalid") {
          return Effect.succeed({ served: false, status: 400, line: BatchLine.errorLine(id, parsed.invalid.customId, 400, parsed.invalid.message) })
        }
        const { customId, body } = parsed.request
        return serve(batch, line, body).pipe(
          Effect.match({
            onSuccess: ({ costNanos, json }): LineOutcome => ({
              served: true,
              status: 200,
              line: BatchLine.outputLine(id, customId, generationId(batch, line), json),
              costNanos
            }),
            onFailure: (error): LineOutcome => {
              const status = statusOf(error)
              return { served: false, status, line: BatchLine.errorLine(id, customId, status, error.message) }
            }
          })
        )
      }
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
          get line() {
            return BatchLine.outputLine(id, customId, generation, EmbeddingsAnswer.text(served, request, false))
          }
        }
      }
      const failed = (batch: BatchIdentity, line: number, customId: string | null, error: ApiError): LineOutcome => {
        const status = statusOf(error)
        return { served: false, status, line: BatchLine.errorLine(requestId(batch, line), customId, status, error.message) }
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
                outcomes[index] = {
                  served: false,
                  status: 400,
                  line: BatchLine.errorLine(requestId(batch, line), parsed.invalid.customId, 400, parsed.invalid.message)
                }
                continue
              }
              const { customId, body } = parsed.request
              const decoded = yield* Effect.result(
                Effect.flatMap(Effect.catch(decodeEmbeddings(body), invalidBody), (payload) => resolved(payload))
              )
              if (decoded._tag === "Failure") {
                outcomes[index] = failed(batch, line, customId, decoded.failure)
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
                    : failed(batch, line, customId, EmbeddingsError.toApiError(result.failure))
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

const statuses: Record<ApiError["_tag"], number> = {
  BadRequest: 400,
  Unauthorized: 401,
  PaymentRequired: 402,
  Forbidden: 403,
  NotFound: 404,
  RequestTimeout: 408,
  PayloadTooLarge: 413,
  TooManyRequests: 429,
  InternalError: 500,
  BadGateway: 502,
  ServiceUnavailable: 503,
  UpstreamTimeout: 524,
  UpstreamOverloaded: 529
}

/** The HTTP status of an error, as the live endpoint answers it (an error line's `code`). */
export const statusOf = (error: ApiError): number => statuses[error._tag]


const isText = (input: EmbeddingRequest["input"]): boolean =>
  typeof input === "string" || (Array.isArray(input) && input.length > 0 && input.every((item) => typeof item === "string"))
