import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import { Caller } from "@switchyard/core/api/Authorization"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import { type ApiError, BadRequest, Forbidden } from "@switchyard/core/schema/ApiError"
import * as EmbeddingsError from "@switchyard/core/errors/EmbeddingsError"
import type { RoutePlan } from "@switchyard/core"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import { Cause, Effect, Exit } from "effect"
import * as StoreFailure from "../http/StoreFailure.ts"
import * as RequestFacts from "../instrumentation/RequestFacts.ts"
import * as Span from "../instrumentation/Span.ts"
import * as SpanAttributes from "../instrumentation/SpanAttributes.ts"

/**
 * What the model endpoints (embeddings and rerank) share at the edge: the key they take, the
 * routing headers they read, what they tell the access log, and the route report they answer.
 */

export const explainHeader = "x-switchyard-explain"
export const seedHeader = "x-switchyard-seed"
const sessionHeader = "x-session-id"
const maxSessionIdLength = 256

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
 * The request's session id: the body's `session_id` (its schema bounds it) wins over
 * `x-session-id`, which is held to the same 256 characters.
 */
export const sessionIdOf = (
  payload: { readonly session_id?: string | undefined },
  headers: RequestHeaders
): Effect.Effect<string | undefined, BadRequest> => {
  const fromHeader = headers[sessionHeader]
  if (payload.session_id !== undefined) return Effect.succeed(payload.session_id)
  return fromHeader !== undefined && [...fromHeader].length > maxSessionIdLength
    ? Effect.fail(new BadRequest({
      message: `${sessionHeader} must be at most ${maxSessionIdLength} characters`,
      metadata: { field: sessionHeader }
    }))
    : Effect.succeed(fromHeader)
}

/**
 * Notes a model call's session (the body's `session_id` over `x-session-id`) and end user (`user`)
 * for its access line.
 */
export const noteSession = (sessionId: string | undefined, user: string | undefined) =>
  RequestFacts.note({
    ...(sessionId === undefined || sessionId === "" ? {} : { session_id: sessionId }),
    ...(user === undefined || user === "" ? {} : { user })
  })

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
  /** What the embeddings cache answered of `totalTokens` (rerank has no cache). */
  readonly cache?: { readonly tokens: number }
}

/**
 * A model call whose answer is being written as it is made: its usage and cost come at the end of
 * the body, after the access line.
 */
export type StartedCall = Omit<ServedCall, "totalTokens" | "costNanos" | "cache">

/**
 * What a served call's usage tells the access log: its tokens (and the cache's part of them) and
 * cost, noted when the call is served, or at the end of an answer written as it is made.
 */
export const usageFacts = (served: Pick<ServedCall, "totalTokens" | "costNanos" | "cache">) => ({
  tokens: served.totalTokens,
  ...(served.cache !== undefined && served.cache.tokens > 0 ? { cached_tokens: served.cache.tokens } : {}),
  cost: creditsFromNanos(served.costNanos)
})

/**
 * What a model call tells the access log and the metrics: the served generation (one being
 * written: what is known when its first bytes go), or the model asked for and the attempts that
 * failed.
 */
const noteOutcome = (task: Catalog.Task, model: string) => <A extends ServedCall | StartedCall>(exit: Exit.Exit<A, ApiError>) => {
  if (Exit.isSuccess(exit)) {
    const call: ServedCall | StartedCall = exit.value
    const started = {
      generation_id: call.id,
      task,
      model: call.model,
      provider: call.provider,
      attempts: call.attempts,
      byok: call.isByok
    }
    if (!("costNanos" in call)) return RequestFacts.note(started)
    const usage = usageFacts(call)
    return Span.annotate(() => SpanAttributes.served({ ...call, task, cost: usage.cost })).pipe(
      Effect.andThen(RequestFacts.note({ ...started, ...usage }))
    )
  }
  const error = exit.cause.reasons.find(Cause.isFailReason)?.error
  const tried = error?.metadata?.attempts
  const attempts = Array.isArray(tried) ? tried as ServedCall["attempts"] : []
  const reason = error?.metadata?.reason
  return Span.annotate(() => ({
    "gen_ai.operation.name": task,
    "gen_ai.request.model": model,
    ...(attempts.length > 0 ? { "gen_ai.provider.name": attempts.at(-1)!.provider } : {}),
    ...(typeof reason === "string" ? { "error.type": reason } : {})
  })).pipe(
    Effect.andThen(RequestFacts.note({ task, model, attempts, ...(attempts.length > 0 ? { provider: attempts.at(-1)!.provider } : {}) }))
  )
}

/**
 * A model call's failures as the API answers them (a store failure noted for the access log),
 * and its outcome noted for the access log and the metrics.
 */
export const answerCall = (task: Catalog.Task, model: string) =>
<A extends ServedCall | StartedCall, R>(self: Effect.Effect<A, EmbeddingsError.EmbeddingsError, R>): Effect.Effect<A, ApiError, R> =>
  self.pipe(
    Effect.tapError(StoreFailure.note),
    // Memory held by the requests in flight: the access log gives the 503 its `Retry-After`.
    Effect.tapError((error) => error._tag === "MemoryBusy" ? RequestFacts.note({ memory_busy: error.retryAfterSeconds }) : Effect.void),
    Effect.mapError(EmbeddingsError.toApiError),
    Effect.onExit(noteOutcome(task, model))
  )

/**
 * A dry run's failures as the plan endpoints answer them.
 */
export const answerPlan = <A, R>(self: Effect.Effect<A, EmbeddingsError.PreparationError | StoreUnavailable, R>) =>
  self.pipe(
    StoreFailure.answer,
    Effect.mapError((e) => (e._tag === "ServiceUnavailable" ? e : EmbeddingsError.preparationToApiError(e)))
  )

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
