import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import { Caller } from "@switchyard/core/api/Authorization"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import { type ApiError, BadRequest, Forbidden } from "@switchyard/core/errors/ApiError"
import type { RoutePlan } from "@switchyard/core"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import { Cause, Effect, Exit } from "effect"
import * as RequestFacts from "../observability/RequestFacts.ts"

/**
 * What the model endpoints (embeddings and rerank) share at the edge: the key they take, the
 * routing headers they read, what they tell the access log, and the route report they answer.
 */

export const explainHeader = "x-switchyard-explain"
export const seedHeader = "x-switchyard-seed"

export const truthy = (value: string | undefined) => value !== undefined && /^(1|true|yes)$/iu.test(value.trim())

/**
 * The request headers a model call reads, by lower-case name.
 */
export type RequestHeaders = Readonly<Record<string, string | undefined>>

/**
 * Only standard keys call model endpoints; management keys manage keys, credits and workspaces.
 */
export const requireStandardKey = Effect.gen(function*() {
  const caller = yield* Caller
  if (caller.kind !== "standard") {
    return yield* new Forbidden({
      message: "Model endpoints take a standard API key; a management key can only manage keys, credits and workspaces",
      metadata: { key_kind: caller.kind }
    })
  }
  return caller
})

/**
 * The draw's seed a request's `x-switchyard-seed` header sets, if any.
 */
export const seedOf = (headers: RequestHeaders): Effect.Effect<number | undefined, BadRequest> => {
  const seedText = headers[seedHeader]
  if (seedText === undefined) return Effect.succeed(undefined)
  return /^\d{1,10}$/u.test(seedText) && Number(seedText) <= 0xffffffff
    ? Effect.succeed(Number(seedText))
    : Effect.fail(new BadRequest({ message: `${seedHeader} must be an integer from 0 to 4294967295`, metadata: { field: seedHeader } }))
}

/**
 * A served model call as the access log and the metrics see it.
 */
export interface ServedCall {
  readonly id: string
  readonly model: string
  readonly provider: string
  readonly attempts: ReadonlyArray<Fallback.AttemptReport>
  readonly totalTokens: number
  readonly costNanos: bigint
  readonly isByok: boolean
}

/**
 * What a model call tells the access log and the metrics: the served generation, or the model
 * asked for and the attempts that failed.
 */
export const noteOutcome = (task: Catalog.Task, model: string) => <A extends ServedCall>(exit: Exit.Exit<A, ApiError>) => {
  if (Exit.isSuccess(exit)) {
    const served = exit.value
    return RequestFacts.note({
      generation_id: served.id,
      task,
      model: served.model,
      provider: served.provider,
      attempts: served.attempts,
      tokens: served.totalTokens,
      cost: creditsFromNanos(served.costNanos),
      byok: served.isByok
    })
  }
  const error = exit.cause.reasons.find(Cause.isFailReason)?.error
  const tried = error?.metadata?.attempts
  const attempts = Array.isArray(tried) ? tried as ServedCall["attempts"] : []
  return RequestFacts.note({ task, model, attempts, ...(attempts.length > 0 ? { provider: attempts.at(-1)!.provider } : {}) })
}

/**
 * The route of a plan as the answer reports it: the explanation and the attempts' ids.
 */
export const report = (plan: RoutePlan.Plan) => ({ ...plan.explanation, attempts: plan.attempts.map((c) => c.id) })

/**
 * The answer of a dry run (`POST /embeddings/plan`, `POST /rerank/plan`).
 */
export const planReport = (task: Catalog.Task, plan: RoutePlan.Plan, estimate: { readonly tokens: number; readonly worstNanos: bigint }) => ({
  object: `${task}.plan` as const,
  model: plan.model,
  attempts: plan.attempts.map((c) => c.id),
  explanation: plan.explanation,
  estimate: { prompt_tokens: estimate.tokens, cost: creditsFromNanos(estimate.worstNanos) }
})
