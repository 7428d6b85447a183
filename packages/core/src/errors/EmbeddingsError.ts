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
 * | `NoEligibleProvider` | 404 |
 * | `RequestTimedOut` | 408 |
 * | `CredentialUnreadable` | 503 |
 * | `UpstreamFailed` | the last upstream failure's (see `UpstreamError`) |
 *
 * The money port's refusals (`Refused`) get 402 or 401 (`errors/Refusal`); a store that failed
 * (`StoreUnavailable`) gets 503.
 *
 * @since 0.1.0
 */
import { Data } from "effect"
import type { CandidateReport } from "../routing/CandidateReport.ts"
import { type UpstreamFailed, failedToApiError } from "../upstream/Fallback.ts"
import type { CredentialUnreadable } from "../store/ByokStore.ts"
import type { Refused } from "../store/Accounting.ts"
import type { StoreUnavailable } from "../store/StoreUnavailable.ts"
import type { ApiError } from "./ApiError.ts"
import { BadRequest, fromStatus, NotFound, ServiceUnavailable } from "./ApiError.ts"
import { refusalToApiError } from "./Refusal.ts"

/**
 * No endpoint of the catalog serves the model.
 *
 * @since 0.1.0
 */
export class ModelNotFound extends Data.TaggedError("ModelNotFound")<{ readonly model: string }> {
  override get message(): string {
    return `Model ${JSON.stringify(this.model)} does not exist`
  }
  get metadata(): { readonly model: string } {
    return { model: this.model }
  }
}

/**
 * The model exists, but for another task: a rerank model asked for vectors, or an embeddings
 * model asked to rerank.
 *
 * @since 0.4.0
 */
export class WrongTask extends Data.TaggedError("WrongTask")<{
  readonly model: string
  readonly task: "embeddings" | "rerank"
  readonly requested: "embeddings" | "rerank"
}> {
  override get message(): string {
    const route = this.task === "rerank" ? "POST /api/v1/rerank" : "POST /api/v1/embeddings"
    const kind = (task: "embeddings" | "rerank") => task === "rerank" ? "a rerank model" : "an embeddings model"
    return `Model ${JSON.stringify(this.model)} is ${kind(this.task)}, not ${kind(this.requested)}; call it through ${route}`
  }
  get metadata(): { readonly field: string; readonly model: string; readonly task: string; readonly requested: string } {
    return { field: "model", model: this.model, task: this.task, requested: this.requested }
  }
}

/**
 * The request carries a kind of input (an image) that no endpoint of the model takes, whatever
 * the preferences or credentials: the request, not the route, is wrong for this model.
 *
 * @since 0.4.0
 */
export class InputNotAccepted extends Data.TaggedError("InputNotAccepted")<{
  readonly model: string
  readonly task: "embeddings" | "rerank"
  readonly missing: ReadonlyArray<string>
  readonly accepted: ReadonlyArray<string>
}> {
  override get message(): string {
    const what = this.task === "rerank" ? "documents" : "input"
    return `Model ${JSON.stringify(this.model)} takes no ${this.missing.join(", ")} ${what}: its endpoints accept ${
      this.accepted.join(", ")
    } only`
  }
  get metadata(): {
    readonly field: string
    readonly model: string
    readonly missing: ReadonlyArray<string>
    readonly accepted: ReadonlyArray<string>
  } {
    return { field: this.task === "rerank" ? "documents" : "input", model: this.model, missing: this.missing, accepted: this.accepted }
  }
}

/**
 * The model exists, but the preferences, the workspace's settings, the providers' credentials or
 * the request's parameters leave no endpoint to try; `candidates` says why each was left out.
 *
 * @since 0.1.0
 */
export class NoEligibleProvider extends Data.TaggedError("NoEligibleProvider")<{
  readonly model: string
  readonly reason: string
  readonly candidates: ReadonlyArray<CandidateReport>
}> {
  override get message(): string {
    const reasons = this.candidates.map((r) => `${r.id}: ${r.detail ?? "not in provider.order"}`).join("; ")
    return `No allowed provider for model ${JSON.stringify(this.model)}: ${this.reason} (${reasons})`
  }
  get metadata(): { readonly model: string; readonly reason: string; readonly candidates: ReadonlyArray<CandidateReport> } {
    return { model: this.model, reason: this.reason, candidates: this.candidates }
  }
}

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

/**
 * Why a route could not be planned.
 *
 * @since 0.1.0
 */
export type RoutingError = ModelNotFound | NoEligibleProvider | WrongTask | InputNotAccepted

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
export type EmbeddingsError = PreparationError | RequestTimedOut | UpstreamFailed | Refused | StoreUnavailable

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
 * The status and envelope of a routing failure: 404, or 400 for a model of another task or an
 * input the model cannot take.
 *
 * @since 0.1.0
 */
export const routingToApiError = (error: RoutingError): NotFound | BadRequest =>
  error._tag === "WrongTask" || error._tag === "InputNotAccepted"
    ? new BadRequest({ message: error.message, metadata: error.metadata })
    : new NotFound({ message: error.message, metadata: error.metadata })

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
  }
}
