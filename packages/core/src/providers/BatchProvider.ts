/**
 * A provider's batch API: the port the gateway's provider batches go through (one adapter per
 * wire format; OpenAI's Files and Batch API is the one the gateway speaks, see
 * `Catalog.batchApiOf`).
 *
 * **Details**
 *
 * A provider batch is a JSONL file of requests uploaded to the provider, a batch created on it,
 * polled until it ends, and its output (and error) file read back. Each request carries a
 * `custom_id` that its result carries too. Failures are `UpstreamError`s, as for live calls.
 *
 * This module holds types only: it performs no I/O.
 *
 * @since 0.6.0
 */
import type { Effect } from "effect"
import type { UpstreamError } from "../upstream/UpstreamError.ts"
import type { Connection } from "./EmbeddingProvider.ts"

/**
 * Where a provider batch stands: still running (`pending`), being cancelled, or ended.
 *
 * @since 0.6.0
 */
export type State = "pending" | "cancelling" | "completed" | "failed" | "expired" | "cancelled"

/**
 * A provider batch as the provider describes it.
 *
 * @since 0.6.0
 */
export interface UpstreamBatch {
  readonly id: string
  readonly state: State
  readonly inputFileId: string
  readonly outputFileId: string | undefined
  readonly errorFileId: string | undefined
  /** Why it failed, when it did (the provider's validation errors). */
  readonly errors: ReadonlyArray<{ readonly code: string; readonly message: string }>
}

/**
 * One request's result: the HTTP status the provider's endpoint answered and its body, or status
 * 0 and the provider's `error` object when it wrote no response.
 *
 * @since 0.6.0
 */
export interface Result {
  readonly customId: string
  readonly status: number
  readonly body: unknown
}

/**
 * Whether a provider batch has ended.
 *
 * @since 0.6.0
 */
export const ended = (state: State): boolean => state !== "pending" && state !== "cancelling"

/**
 * The batch API of one wire format.
 *
 * @since 0.6.0
 */
export interface BatchProvider {
  /** One request line of the file to upload. */
  readonly requestLine: (customId: string, body: unknown) => string
  /** Uploads a JSONL file of request lines; its id. */
  readonly upload: (connection: Connection, filename: string, jsonl: string) => Effect.Effect<string, UpstreamError>
  readonly create: (
    connection: Connection,
    inputFileId: string,
    metadata: Readonly<Record<string, string>>
  ) => Effect.Effect<UpstreamBatch, UpstreamError>
  /** The provider batch made on an uploaded file, if one was (a submission cut short by a restart). */
  readonly find: (connection: Connection, inputFileId: string) => Effect.Effect<UpstreamBatch | undefined, UpstreamError>
  readonly retrieve: (connection: Connection, id: string) => Effect.Effect<UpstreamBatch, UpstreamError>
  readonly cancel: (connection: Connection, id: string) => Effect.Effect<UpstreamBatch, UpstreamError>
  /** The results in an output or error file. */
  readonly results: (connection: Connection, fileId: string) => Effect.Effect<ReadonlyArray<Result>, UpstreamError>
}
