/**
 * A provider's batch API: the port the gateway's provider batches go through, one adapter per
 * wire format (see `Catalog.batchApiOf` for which providers have one).
 *
 * **Details**
 *
 * A provider batch is a JSONL file of requests uploaded to the provider (or to the operator's
 * bucket), a job created on it, polled until it ends, and its results read back. The gateway
 * hands the adapter each of its lines as an {@link UpstreamRequest}, as a live call would have
 * sent it; the adapter writes it as one or several request lines of its own
 * ({@link BatchProvider.requests}) and, once the job ended, reads its answer back from their
 * results ({@link BatchProvider.answer}) as the live adapter reads an answer. Failures are
 * `UpstreamError`s, as for live calls.
 *
 * This module holds types only: it performs no I/O.
 *
 * @since 0.6.0
 */
import type { Effect } from "effect"
import type { UpstreamError } from "../upstream/UpstreamError.ts"
import type { Connection, EmbeddingResult, UpstreamRequest } from "./EmbeddingProvider.ts"

/**
 * Where a provider batch stands: still running (`pending`), being cancelled, or ended.
 *
 * @since 0.6.0
 */
export type State = "pending" | "cancelling" | "completed" | "failed" | "expired" | "cancelled"

/**
 * A provider batch as the provider describes it: its id, where it stands, where its results are
 * (file ids, or storage URIs, as its adapter reads them), and why it failed when it did.
 *
 * @since 0.6.0
 */
export interface UpstreamBatch {
  readonly id: string
  readonly state: State
  readonly results: ReadonlyArray<string>
  /** Why it failed, when it did (the provider's validation errors). */
  readonly errors: ReadonlyArray<{ readonly code: string; readonly message: string }>
}

/**
 * One request's result: the HTTP status the provider's endpoint answered and its body (status 0
 * and the provider's error object when it wrote no response), under the key its request carried.
 *
 * @since 0.6.0
 */
export interface Result {
  readonly customId: string
  readonly status: number
  readonly body: unknown
}

/**
 * What a job is made with besides its input: the upstream model and the parameters the provider
 * takes per job (Voyage's `request_params`, Vertex's `modelParameters`), as JSON.
 *
 * @since 0.10.0
 */
export interface Job {
  readonly model: string
  readonly params: Readonly<Record<string, unknown>>
}

/**
 * A line's answer, read from its requests' results: served, failed by the provider (its status
 * and body, as the live call's failure would be), or missing (the job wrote no result for it).
 *
 * @since 0.10.0
 */
export type Answer =
  | { readonly _tag: "Served"; readonly result: EmbeddingResult }
  | { readonly _tag: "Failed"; readonly status: number; readonly body: unknown }
  | { readonly _tag: "Missing" }

/**
 * How much one job may hold (the provider's published limits): requests, embedding inputs across
 * them, bytes of its input file, and the fewest requests it takes (Bedrock's minimum).
 *
 * @since 0.10.0
 */
export interface Limits {
  readonly maxRequests: number
  readonly maxInputs: number
  readonly maxBytes: number
  readonly minRequests: number
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
 * **Gotchas**
 *
 * `name` is unique per provider batch and the same on every try: adapters whose provider can
 * look a job up by name (Bedrock, Vertex) or by input file (the others) find the one a submission
 * cut short made, instead of making a second.
 *
 * @since 0.6.0
 */
export interface BatchProvider {
  readonly limits: Limits
  /**
   * One line's request lines, under its key (several when the provider embeds one input a
   * request), and what the job they go in must say for all of its lines (the model, and
   * parameters some providers take per job only): lines whose `job` differ go to different jobs.
   */
  readonly requests: (
    key: string,
    request: UpstreamRequest
  ) => Effect.Effect<{ readonly lines: ReadonlyArray<string>; readonly job: Job }, UpstreamError>
  /** Uploads a JSONL file of request lines; where it is (a file id or a storage URI). */
  readonly upload: (connection: Connection, name: string, jsonl: string) => Effect.Effect<string, UpstreamError>
  readonly create: (connection: Connection, input: string, job: Job & { readonly name: string }) => Effect.Effect<UpstreamBatch, UpstreamError>
  /** The job made on an uploaded input under `name`, if one was (a submission cut short by a restart). */
  readonly find: (connection: Connection, input: string, name: string) => Effect.Effect<UpstreamBatch | undefined, UpstreamError>
  readonly retrieve: (connection: Connection, id: string) => Effect.Effect<UpstreamBatch, UpstreamError>
  readonly cancel: (connection: Connection, id: string) => Effect.Effect<void, UpstreamError>
  /** The results an ended job wrote. */
  readonly results: (connection: Connection, batch: UpstreamBatch) => Effect.Effect<ReadonlyArray<Result>, UpstreamError>
  /** A line's answer from the results, looked up by the keys its requests carried. */
  readonly answer: (
    key: string,
    request: UpstreamRequest,
    lookup: (customId: string) => Result | undefined
  ) => Effect.Effect<Answer, UpstreamError>
  /**
   * Deletes what the gateway uploaded for a job (`input`) and what the provider wrote for it (the
   * job `id`'s results, when it was made); what is already gone counts as deleted.
   */
  readonly cleanup: (connection: Connection, input: string, id: string | undefined) => Effect.Effect<void, UpstreamError>
}
