/**
 * The fallback runner: a plan's attempts tried in order with one attempt function, until one
 * answers or a failure says no other endpoint would fare better.
 *
 * **Details**
 *
 * Each attempt ends as an {@link AttemptReport} (the routing explanation's `tried` list): its
 * outcome, its latency on the `Clock`, and for a failure the reason, the status the caller would
 * get and the provider's redacted message. An {@link UpstreamError} whose class is
 * `next_provider` moves on; `stop` ends the run. When no attempt succeeds the run fails with
 * {@link UpstreamFailed}, which carries the last failure and every report. An attempt that fails
 * with an error of another kind (the request's own time limit, say) ends the run with that error,
 * unreported.
 *
 * `observe` sees every finished attempt as it ends (the gateway records endpoint health there),
 * so a run cut short by a time limit has still reported what it tried.
 *
 * The runner does no I/O of its own: time comes from `Clock`, the rest from the attempt function.
 *
 * @since 0.1.0
 */
import { Clock, Data, Effect, Exit, Option } from "effect"
import type { ApiError } from "../schema/ApiError.ts"
import type { Candidate } from "../routing/Candidates.ts"
import { type AttemptContext, describe, toApiError, UpstreamError } from "./UpstreamError.ts"

/**
 * One attempt of a request, for the routing explanation.
 *
 * @since 0.1.0
 */
export interface AttemptReport {
  readonly endpoint: string
  readonly provider: string
  readonly outcome: "success" | "failure" | "skipped"
  readonly reason?: string
  readonly status?: number
  /** The provider's own HTTP status, when it answered one. */
  readonly upstream_status?: number
  readonly message?: string
  readonly latency_ms?: number
  readonly byok: boolean
}

/**
 * One endpoint to try, and whether the workspace's own credential pays for it.
 *
 * @since 0.1.0
 */
export interface Attempt {
  readonly candidate: Candidate
  readonly byok: boolean
}

/**
 * A finished attempt as `observe` sees it: `at` and `latencyMs` from the `Clock`.
 *
 * @since 0.1.0
 */
export type Observed<A> =
  | { readonly _tag: "Success"; readonly attempt: Attempt; readonly value: A; readonly at: number; readonly latencyMs: number }
  | { readonly _tag: "Failure"; readonly attempt: Attempt; readonly error: UpstreamError; readonly at: number; readonly latencyMs: number }

/**
 * The answer of the first attempt that succeeded, and the report of every attempt made.
 *
 * @since 0.1.0
 */
export interface Served<A> {
  readonly attempt: Attempt
  readonly value: A
  readonly reports: ReadonlyArray<AttemptReport>
}

/**
 * No attempt succeeded: the last failure, where it happened, and every attempt made.
 *
 * @since 0.1.0
 */
export class UpstreamFailed extends Data.TaggedError("UpstreamFailed")<{
  readonly error: UpstreamError
  readonly provider: string
  readonly endpoint: string
  readonly attempts: ReadonlyArray<AttemptReport>
}> {
  override get message(): string {
    return describe(this.error.reason, this.provider)
  }
}

/**
 * The caller-facing error of a failed run: the last failure's status and message, and
 * `metadata.attempts` with every report.
 *
 * @since 0.1.0
 */
export const failedToApiError = (failed: UpstreamFailed): ApiError => {
  const error = toApiError(failed.error, failed)
  return Object.assign(error, { metadata: { ...(error.metadata ?? {}), attempts: failed.attempts } }) as ApiError
}

const contextOf = (attempt: Attempt): AttemptContext => ({ provider: attempt.candidate.provider.slug, endpoint: attempt.candidate.id })

/**
 * One attempt's call, timed on the `Clock` and shown to `observe` as it ends: its value, or its
 * failure when that is the upstream's. Its outcome comes back as an `Exit` with its latency; a
 * failure of another kind (the request's own time limit) is not observed.
 *
 * @since 0.1.0
 */
export const observed = <A, E, R, R2 = never>(
  attempt: Attempt,
  call: Effect.Effect<A, UpstreamError | E, R>,
  observe: (observed: Observed<A>) => Effect.Effect<void, never, R2>
): Effect.Effect<{ readonly exit: Exit.Exit<A, UpstreamError | E>; readonly latencyMs: number }, never, R | R2> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const exit = yield* Effect.exit(call)
    const at = yield* Clock.currentTimeMillis
    const latencyMs = at - started
    if (Exit.isSuccess(exit)) yield* observe({ _tag: "Success", attempt, value: exit.value, at, latencyMs })
    else {
      const error = Option.getOrUndefined(Exit.findErrorOption(exit))
      if (error instanceof UpstreamError) yield* observe({ _tag: "Failure", attempt, error, at, latencyMs })
    }
    return { exit, latencyMs }
  })

/**
 * Tries `attempts` in order with `call` (see the module notes).
 *
 * @since 0.1.0
 */
export const run = <A, R, R2 = never, E = never>(
  attempts: ReadonlyArray<Attempt>,
  call: (attempt: Attempt) => Effect.Effect<A, UpstreamError | E, R>,
  observe: (observed: Observed<A>) => Effect.Effect<void, never, R2> = () => Effect.void
): Effect.Effect<Served<A>, UpstreamFailed | E, R | R2> =>
  Effect.gen(function*() {
    const reports: Array<AttemptReport> = []
    let last: { readonly attempt: Attempt; readonly error: UpstreamError } | undefined
    for (const attempt of attempts) {
      const { candidate, byok } = attempt
      const { exit, latencyMs } = yield* observed(attempt, call(attempt), observe)
      if (Exit.isSuccess(exit)) {
        reports.push({ endpoint: candidate.id, provider: candidate.provider.slug, outcome: "success", latency_ms: latencyMs, byok })
        return { attempt, value: exit.value, reports }
      }
      const error = Option.getOrUndefined(Exit.findErrorOption(exit))
      if (error === undefined) return yield* Effect.die(Exit.isFailure(exit) ? exit.cause : "attempt ended without a result")
      // Not the upstream's failure (the request's own time ran out): the run ends with it, unreported.
      if (!(error instanceof UpstreamError)) return yield* Effect.fail(error)
      reports.push({
        endpoint: candidate.id,
        provider: candidate.provider.slug,
        outcome: "failure",
        reason: error.reason._tag,
        status: error.status,
        ...("upstream_status" in error.reason && error.reason.upstream_status !== undefined
          ? { upstream_status: error.reason.upstream_status }
          : {}),
        message: describe(error.reason, candidate.provider.slug),
        latency_ms: latencyMs,
        byok
      })
      last = { attempt, error }
      if (error.failureClass === "stop") break
    }
    if (last === undefined) return yield* Effect.die("a plan has at least one attempt")
    return yield* new UpstreamFailed({ error: last.error, ...contextOf(last.attempt), attempts: reports })
  })
