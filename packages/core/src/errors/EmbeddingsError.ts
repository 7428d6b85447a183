/**
 * What can go wrong with an embeddings request, each error named for the fact it reports, and the
 * one place each fact gets its HTTP status and envelope ({@link toApiError}, called at the edge).
 *
 * **Details**
 *
 * | error | status |
 * |---|---|
 * | `ModelNotFound` | 404 |
 * | `WrongTask` | 400 |
 * | `InputNotAccepted` | 400 |
 * | `WidthNotOffered` | 400 |
 * | `NoEligibleProvider` | 404 |
 * | `RequestTimedOut` | 408 |
 * | `CredentialUnreadable` | 503 |
 * | `AnswerTooLarge` | 413 |
 * | `MemoryBusy` | 503 (the route adds `Retry-After`) |
 * | `UpstreamFailed` | the last upstream failure's (see `UpstreamError`) |
 *
 * The money port's refusals (`Refused`) get 402 or 401 (`errors/Refusal`); a store that failed
 * (`StoreUnavailable`) gets 503.
 *
 * @since 0.1.0
 */
import { Data } from "effect"
import { type RoutingError, routingToApiError } from "../routing/RoutingError.ts"
import { type UpstreamFailed, failedToApiError } from "../upstream/Fallback.ts"
import type { CredentialUnreadable } from "../store/ByokStore.ts"
import type { Refused } from "../store/Accounting.ts"
import type { StoreUnavailable } from "../store/StoreUnavailable.ts"
import type { ApiError } from "../schema/ApiError.ts"
import { type BadRequest, fromStatus, type NotFound, PayloadTooLarge, ServiceUnavailable } from "../schema/ApiError.ts"
import { refusalToApiError } from "./Refusal.ts"

/**
 * The gateway's own time limit for the whole request ran out.
 *
 * @since 0.1.0
 */
export class RequestTimedOut extends Data.TaggedError("RequestTimedOut")<{ readonly timeoutMs: number }> {
  override get message(): string {
    return `The request did not finish within ${this.timeoutMs} ms`
  }
}

const MiB = 1024 * 1024
const mib = (bytes: number) => Math.ceil(bytes / MiB)

/**
 * What a request's answer would hold is more than the gateway's whole memory budget for requests
 * in flight: it can never be served as it is, only split. `what` says what the estimate counts
 * (e.g. "2000 inputs × 1536 dimensions as float JSON"); `maxItems` how many of its items would fit.
 *
 * @since 0.4.0
 */
export class AnswerTooLarge extends Data.TaggedError("AnswerTooLarge")<{
  readonly answerBytes: number
  readonly budgetBytes: number
  readonly what: string
  readonly items: "inputs" | "documents"
  readonly maxItems: number
}> {
  override get message(): string {
    return `The answer to this request would hold about ${mib(this.answerBytes)} MiB (${this.what}), more than the ` +
      `${mib(this.budgetBytes)} MiB this gateway may hold for all requests in flight (its memory budget). ` +
      `Split it into requests of at most ${this.maxItems} ${this.items}` +
      (this.items === "inputs" ? `, ask for encoding_format "base64" (about 4 times smaller) or fewer dimensions.` : ".")
  }
}

/**
 * What a request's answer would hold does not fit beside the requests in flight now; it would
 * fit alone: worth retrying shortly.
 *
 * **Details**
 *
 * With `share`, the request's workspace (or its key, beside the workspace's other keys) already
 * holds its share of the memory while other tenants need it: the message names the share.
 *
 * @since 0.4.0
 */
export class MemoryBusy extends Data.TaggedError("MemoryBusy")<{
  readonly answerBytes: number
  readonly retryAfterSeconds: number
  readonly share?: { readonly level: "workspace" | "key"; readonly percent: number; readonly bytes: number }
}> {
  override get message(): string {
    const needs = `this answer needs about ${mib(this.answerBytes)} MiB`
    if (this.share === undefined) return `The gateway holds as many answer bytes as its memory allows (${needs}): retry shortly`
    const who = this.share.level === "key" ? "This key" : "This workspace"
    const beside = this.share.level === "key" ? "its workspace's other keys" : "other workspaces"
    return `${who} already holds its share of the gateway's request memory (${this.share.percent}% of the budget, ` +
      `${mib(this.share.bytes)} MiB) while ${beside} need it (${needs}): retry shortly`
  }
}

/**
 * Why a request is not admitted by the memory it would hold.
 *
 * @since 0.4.0
 */
type AdmissionError = AnswerTooLarge | MemoryBusy

/**
 * The status and envelope of a request not admitted: 413 naming the limit and the split, or 503.
 *
 * @since 0.4.0
 */
const admissionToApiError = (error: AdmissionError): PayloadTooLarge | ServiceUnavailable =>
  error._tag === "AnswerTooLarge"
    ? new PayloadTooLarge({
      message: error.message,
      metadata: {
        reason: "answer_too_large",
        answer_bytes: error.answerBytes,
        budget_bytes: error.budgetBytes,
        [`max_${error.items}`]: error.maxItems
      }
    })
    : new ServiceUnavailable({
      message: error.message,
      metadata: {
        reason: "memory_busy",
        retryable: true,
        retry_after: error.retryAfterSeconds,
        ...(error.share === undefined ? {} : { share_percent: error.share.percent, share_bytes: error.share.bytes })
      }
    })

/**
 * Why a request could not be made ready to run: no route, or a credential it needs that does not
 * open.
 *
 * @since 0.2.0
 */
export type PreparationError = RoutingError | CredentialUnreadable

/**
 * Every way an embeddings request can fail.
 *
 * @since 0.1.0
 */
export type EmbeddingsError = PreparationError | AdmissionError | RequestTimedOut | UpstreamFailed | Refused | StoreUnavailable

/**
 * The status and envelope of a store that failed: 503, worth retrying.
 *
 * @since 0.3.0
 */
export const storeToApiError = (_: StoreUnavailable): ServiceUnavailable =>
  new ServiceUnavailable({
    message: "The gateway's store is unavailable; try again shortly",
    metadata: { reason: "store_unavailable", retryable: true }
  })

/**
 * The status and envelope of a request that could not be made ready: 404 or 503.
 *
 * @since 0.2.0
 */
export const preparationToApiError = (error: PreparationError): NotFound | BadRequest | ServiceUnavailable =>
  error._tag === "CredentialUnreadable"
    ? new ServiceUnavailable({
      message: error.message,
      metadata: { reason: "credential_unreadable", provider: error.provider, retryable: false }
    })
    : routingToApiError(error)

/**
 * The status and envelope of each fact.
 *
 * @since 0.1.0
 */
export const toApiError = (error: EmbeddingsError): ApiError => {
  switch (error._tag) {
    case "ModelNotFound":
    case "NoEligibleProvider":
    case "WrongTask":
    case "InputNotAccepted":
    case "WidthNotOffered":
    case "CredentialUnreadable":
      return preparationToApiError(error)
    case "RequestTimedOut":
      return fromStatus(408, error.message)
    case "UpstreamFailed":
      return failedToApiError(error)
    case "Refused":
      return refusalToApiError(error)
    case "StoreUnavailable":
      return storeToApiError(error)
    case "AnswerTooLarge":
    case "MemoryBusy":
      return admissionToApiError(error)
  }
}
