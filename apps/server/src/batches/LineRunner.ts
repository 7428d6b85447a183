import type { CallerShape } from "@switchyard/core/api/Authorization"
import * as EmbeddingsError from "@switchyard/core/errors/EmbeddingsError"
import type { ApiError } from "@switchyard/core/errors/ApiError"
import type * as Batch from "@switchyard/core/schema/Batch"
import * as BatchLine from "@switchyard/core/schema/BatchLine"
import { EmbeddingRequest } from "@switchyard/core/schema/EmbeddingRequest"
import { RerankRequest } from "@switchyard/core/schema/RerankRequest"
import { Context, Effect, Layer, Schema } from "effect"
import { HttpApiError } from "effect/http-api"
import * as Crypto from "node:crypto"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { Embeddings } from "../embeddings/Embeddings.ts"
import * as EmbeddingsBody from "../handlers/Embeddings.ts"
import * as RerankBody from "../handlers/Rerank.ts"
import { resolveModel } from "../handlers/ModelCall.ts"
import * as SchemaErrorsLive from "../http/SchemaErrorsLive.ts"
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
  readonly line: string
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
}>()("@switchyard/server/batches/LineRunner") {
  static readonly layer = Layer.effect(
    LineRunner,
    Effect.gen(function*() {
      const embeddings = yield* Embeddings
      const rerank = yield* Rerank
      const resolved = resolveModel(yield* CurrentCatalog)
      const decodeEmbeddings = Schema.decodeUnknownEffect(EmbeddingRequest, { errors: "all" })
      const decodeRerank = Schema.decodeUnknownEffect(RerankRequest, { errors: "all" })
      const invalidBody = (cause: Schema.SchemaError) =>
        SchemaErrorsLive.transform(new HttpApiError.HttpApiSchemaError({ kind: "Payload", cause }))

      const serve = (batch: BatchIdentity, line: number, body: unknown): Effect.Effect<string, ApiError> => {
        const id = generationId(batch, line)
        if (batch.endpoint === "/v1/embeddings") {
          return Effect.gen(function*() {
            const payload = yield* resolved(yield* Effect.catch(decodeEmbeddings(body), invalidBody))
            const served = yield* embeddings.create(batch.caller, payload, { generationId: id }).pipe(
              Effect.mapError(EmbeddingsError.toApiError)
            )
            return Buffer.from(EmbeddingsBody.body(served, payload, false)).toString("utf8")
          })
        }
        return Effect.gen(function*() {
          const payload = yield* resolved(yield* Effect.catch(decodeRerank(body), invalidBody))
          const served = yield* rerank.create(batch.caller, payload, { generationId: id }).pipe(
            Effect.mapError(EmbeddingsError.toApiError)
          )
          return JSON.stringify(RerankBody.body(served, payload, false))
        })
      }

      const run = (batch: BatchIdentity, line: number, text: string): Effect.Effect<LineOutcome> => {
        const id = requestId(batch, line)
        const parsed = BatchLine.parse(text, line, batch.endpoint)
        if (parsed._tag === "Invalid") {
          return Effect.succeed({ served: false, status: 400, line: BatchLine.errorLine(id, parsed.invalid.customId, 400, parsed.invalid.message) })
        }
        const { customId, body } = parsed.request
        return serve(batch, line, body).pipe(
          Effect.match({
            onSuccess: (json): LineOutcome => ({
              served: true,
              status: 200,
              line: BatchLine.outputLine(id, customId, generationId(batch, line), json)
            }),
            onFailure: (error): LineOutcome => {
              const status = statusOf(error)
              return { served: false, status, line: BatchLine.errorLine(id, customId, status, error.message) }
            }
          })
        )
      }
      return LineRunner.of({ run })
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

const statusOf = (error: ApiError): number => statuses[error._tag]
