/**
 * Why a route could not be planned, each error named for the fact it reports, with its status and
 * envelope (`routingToApiError`): an unknown model 404, no eligible provider 404, a model of another
 * task, an input it cannot take or a width it does not have 400.
 *
 * @since 0.4.0
 */
import { Data } from "effect"
import type { CandidateReport } from "./CandidateReport.ts"
import { BadRequest, NotFound } from "../schema/ApiError.ts"

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
 * The request asks a Matryoshka model for a width it does not allow, at every endpoint that
 * serves it: the request, not the route, is wrong for this model. `widths` names what it has.
 *
 * @since 0.12.0
 */
export class WidthNotOffered extends Data.TaggedError("WidthNotOffered")<{
  readonly model: string
  readonly width: number
  readonly widths: ReadonlyArray<string>
}> {
  override get message(): string {
    return `Model ${JSON.stringify(this.model)} has no width ${this.width}: it answers ${this.widths.join("; or ")} dimensions`
  }
  get metadata(): { readonly field: string; readonly model: string; readonly dimensions: number; readonly widths: ReadonlyArray<string> } {
    return { field: "dimensions", model: this.model, dimensions: this.width, widths: this.widths }
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
  /** Set when every provider serving the model is disabled: their slugs. */
  readonly disabled?: ReadonlyArray<string>
}> {
  override get message(): string {
    if (this.disabled !== undefined && this.disabled.length > 0) {
      const names = this.disabled.length === 1
        ? `${this.disabled[0]} is disabled`
        : `${this.disabled.slice(0, -1).join(", ")} and ${this.disabled.at(-1)} are disabled`
      return `Model ${JSON.stringify(this.model)} has no enabled provider: ${names}`
    }
    const reasons = this.candidates.map((r) => `${r.id}: ${r.detail ?? "not in provider.order"}`).join("; ")
    return `No allowed provider for model ${JSON.stringify(this.model)}: ${this.reason} (${reasons})`
  }
  get metadata(): {
    readonly model: string
    readonly reason: string
    readonly candidates: ReadonlyArray<CandidateReport>
    readonly disabled?: ReadonlyArray<string>
  } {
    return { model: this.model, reason: this.reason, candidates: this.candidates, ...(this.disabled === undefined ? {} : { disabled: this.disabled }) }
  }
}

/**
 * Why a route could not be planned.
 *
 * @since 0.1.0
 */
export type RoutingError = ModelNotFound | NoEligibleProvider | WrongTask | InputNotAccepted | WidthNotOffered

/**
 * The status and envelope of a routing failure: 404, or 400 for a model of another task or an
 * input the model cannot take.
 *
 * @since 0.1.0
 */
export const routingToApiError = (error: RoutingError): NotFound | BadRequest =>
  error._tag === "WrongTask" || error._tag === "InputNotAccepted" || error._tag === "WidthNotOffered"
    ? new BadRequest({ message: error.message, metadata: error.metadata })
    : new NotFound({ message: error.message, metadata: error.metadata })
