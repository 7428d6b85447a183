import type { CallerShape } from "@switchyard/core/api/Authorization"
import { type ApiError, statusOf } from "@switchyard/core/schema/ApiError"
import type * as Batch from "@switchyard/core/schema/Batch"
import * as BatchLine from "@switchyard/core/schema/BatchLine"
import * as EmbeddingRequestSchema from "@switchyard/core/schema/EmbeddingRequest"
import { RerankRequest } from "@switchyard/core/schema/RerankRequest"
import { Effect, Schema } from "effect"
import { HttpApiError } from "effect/http-api"
import * as Crypto from "node:crypto"
import * as SchemaErrorsLive from "../http/SchemaErrorsLive.ts"
import type { BatchRow } from "../store/batches/BatchStore.ts"

/**
 * What the live batch runner (LineRunner.ts, BatchRunner.ts) and the provider batches
 * (ProviderBatches.ts and its parts) share about a batch's lines: the batch's identity, a line's
 * ids, its outcome, and how its body is decoded.
 */

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

/** A batch's identity, from its row. */
export const identityOf = (row: BatchRow): BatchIdentity => ({
  id: row.id,
  createdAtMs: Number(row.created_at),
  endpoint: row.endpoint,
  caller: { keyId: row.key_id, keyHash: row.key_hash, kind: "standard", userId: row.user_id, workspaceId: row.workspace_id }
})

/** A line run: its output line (served) or its error line. */
export interface LineOutcome {
  readonly served: boolean
  /** The output or error line; a served line of a group may write it out each time it is read (read it once). */
  readonly line: string
  /** What a served line was charged (its generation's cost); absent for an error line. */
  readonly costNanos?: bigint
  /** The live status of an error line (for pacing: 429 and 5xx are worth another try). */
  readonly status: number
  /** The provider that served the line (its slug), or ran the job that failed it. */
  readonly provider?: string | undefined
  /** `provider_batch` when a job at the provider's batch API ran it; absent for a live call. */
  readonly mode?: "provider_batch" | undefined
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

/**
 * Whether a generation id is a batch line's ({@link generationId}: a 16-character digest where a
 * request's id carries 12 random characters).
 */
export const isLineGeneration = (id: string): boolean => /^gen-[a-z]+-[0-9a-z]{1,11}-[A-Za-z0-9_-]{16}$/u.test(id)

/** The `id` of a line's output or error line. */
export const requestId = (batch: BatchIdentity, line: number) => `batch_req_${digest(batch.id, line)}`

/** A line that failed with `error`: its error line, with the status the live endpoint answers. */
export const errorOutcome = (batch: BatchIdentity, line: number, customId: string | null, error: ApiError): LineOutcome => {
  const status = statusOf(error)
  return { served: false, status, line: BatchLine.errorLine(requestId(batch, line), customId, status, error.message) }
}

/** A line that is not a request (not JSON, no body...): a 400 error line. */
export const invalidOutcome = (batch: BatchIdentity, line: number, invalid: { readonly customId: string | null; readonly message: string }): LineOutcome => ({
  served: false,
  status: 400,
  line: BatchLine.errorLine(requestId(batch, line), invalid.customId, 400, invalid.message)
})

/** Whether an embeddings input is text only (a string or strings): such lines may share upstream calls. */
export const isText = (input: EmbeddingRequestSchema.EmbeddingRequest["input"]): boolean =>
  typeof input === "string" || (Array.isArray(input) && input.length > 0 && input.every((item) => typeof item === "string"))

const invalidBody = (cause: Schema.SchemaError) =>
  SchemaErrorsLive.transform(new HttpApiError.HttpApiSchemaError({ kind: "Payload", cause }))

const decodeEmbeddingsBody = Schema.decodeUnknownEffect(EmbeddingRequestSchema.EmbeddingRequest, { errors: "all" })
const decodeRerankBody = Schema.decodeUnknownEffect(RerankRequest, { errors: "all" })

/** A line's body as an embeddings request, or the error the live endpoint answers for it. */
export const decodeEmbeddings = (body: unknown) => Effect.catch(decodeEmbeddingsBody(body), invalidBody)

/** A line's body as a rerank request, or the error the live endpoint answers for it. */
export const decodeRerank = (body: unknown) => Effect.catch(decodeRerankBody(body), invalidBody)
