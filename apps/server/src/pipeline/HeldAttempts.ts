import { RequestTimedOut } from "@switchyard/core/errors/EmbeddingsError"
import type { Accounting, Reservation } from "@switchyard/core/store/Accounting"
import * as Fallback from "@switchyard/core/upstream/Fallback"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import * as Money from "@switchyard/core/catalog/Money"
import { Clock, Config, Duration, Effect, Exit } from "effect"
import * as Span from "../instrumentation/Span.ts"
import * as SpanAttributes from "../instrumentation/SpanAttributes.ts"
import * as UpstreamSpan from "../instrumentation/UpstreamSpan.ts"
import * as Route from "./Route.ts"

/**
 * The limits a model call's attempts run under, whatever the task: the request's time, one
 * upstream call's time at a provider that sets none, and how many upstream calls of one attempt
 * (its batches) run at once.
 */
export const CallConfig = Config.all({
  requestTimeoutMs: Config.Int("SWITCHYARD_REQUEST_TIMEOUT_MS").pipe(Config.withDefault(120_000)),
  attemptTimeoutMs: Config.Int("SWITCHYARD_ATTEMPT_TIMEOUT_MS").pipe(Config.withDefault(15_000)),
  batchConcurrency: Config.Int("SWITCHYARD_BATCH_CONCURRENCY").pipe(Config.withDefault(4))
})

/** A settled cost in nano-dollars, as the hold is settled at: rounded half to even. */
export const nanosOf = (atto: bigint) => Money.toUnits(atto, 9, "half-even")

/**
 * One upstream call under one timer: it ends at `limitMs`, its provider's limit, with the
 * upstream's `Timeout` (which falls back), or when the request's time runs out first
 * (`request.leftMs`), with `RequestTimedOut` (which ends the request).
 */
export function bounded<A, E>(attempt: Effect.Effect<A, E>, limitMs: number): Effect.Effect<A, E | UpstreamError.UpstreamError>
export function bounded<A, E>(
  attempt: Effect.Effect<A, E>,
  limitMs: number,
  request: { readonly leftMs: number; readonly timedOut: () => RequestTimedOut }
): Effect.Effect<A, E | UpstreamError.UpstreamError | RequestTimedOut>
export function bounded<A, E>(
  attempt: Effect.Effect<A, E>,
  limitMs: number,
  request?: { readonly leftMs: number; readonly timedOut: () => RequestTimedOut }
): Effect.Effect<A, E | UpstreamError.UpstreamError | RequestTimedOut> {
  if (request !== undefined && request.leftMs <= 0) return Effect.fail(request.timedOut())
  const requestEnds = request !== undefined && request.leftMs <= limitMs
  return Effect.timeoutOrElse(attempt, {
    duration: Duration.millis(requestEnds ? request.leftMs : limitMs),
    orElse: (): Effect.Effect<never, UpstreamError.UpstreamError | RequestTimedOut> =>
      requestEnds ? Effect.fail(request.timedOut()) : Effect.fail(UpstreamError.timeout(limitMs))
  })
}

/**
 * Bounds one upstream call of an attempt: at its provider's time limit, or at the request's
 * deadline when that comes first, with one timer.
 */
export type Limit = <X, E>(upstreamCall: Effect.Effect<X, E>) => Effect.Effect<X, E | UpstreamError.UpstreamError | RequestTimedOut>

/**
 * The {@link Limit} of an attempt at `attempt`'s provider, for a request that must end by
 * `deadline` (epoch ms) with `timedOut`, made only if it does: an error captures its stack when
 * made, tens of microseconds that a request answered in time should not pay.
 */
export const limitOf = (
  attempt: Fallback.Attempt,
  attemptTimeoutMs: number,
  deadline: number,
  timedOut: () => RequestTimedOut
): Limit => {
  const limitMs = Route.attemptLimitMs(attempt.candidate.provider, attemptTimeoutMs)
  return (upstreamCall) => Effect.flatMap(Clock.currentTimeMillis, (now) => bounded(upstreamCall, limitMs, { leftMs: deadline - now, timedOut }))
}

/**
 * A request's attempts run under its hold, whatever the task: each attempt in its own span, in the
 * plan's fallback order; when none succeeds (or the time runs out), the hold is released.
 *
 * Time: each upstream call of an attempt (one per batch) runs under `limit`, one timer that ends
 * it at its provider's limit (`timeout_ms`, else `attemptTimeoutMs`) with the upstream's
 * `Timeout`, which falls back, or at the request's deadline (`timeoutMs` after the first attempt
 * started) when that comes first, with `RequestTimedOut`, which ends the request.
 */
export const run = <A>(options: {
  readonly accounting: Accounting["Service"]
  readonly reservation: Reservation
  readonly attempts: ReadonlyArray<Fallback.Attempt>
  readonly call: (attempt: Fallback.Attempt, limit: Limit) => Effect.Effect<A, UpstreamError.UpstreamError | RequestTimedOut>
  readonly observe: (observed: Fallback.Observed<A>) => Effect.Effect<void>
  /** The attempt span's name (`Embeddings.attempt`). */
  readonly span: string
  /** The upstream's input tokens of a successful attempt, for its span. */
  readonly tokensOf: (value: A) => number
  /** The request's time limit. */
  readonly timeoutMs: number
  /** The time limit of an upstream call at a provider that sets none. */
  readonly attemptTimeoutMs: number
}) =>
  Effect.flatMap(Clock.currentTimeMillis, (startedAt) => {
    const deadline = startedAt + options.timeoutMs
    const timedOut = () => new RequestTimedOut({ timeoutMs: options.timeoutMs })
    const traced = (a: Fallback.Attempt) => {
      const slug = a.candidate.provider.slug
      return options.call(a, limitOf(a, options.attemptTimeoutMs, deadline, timedOut)).pipe(
        // The failure names its provider, so the span's error does too.
        Effect.mapError((error) => error._tag === "UpstreamError" ? UpstreamError.atProvider(slug)(error) : error),
        Effect.tap((value) => Span.annotate(() => SpanAttributes.usage(options.tokensOf(value)))),
        Effect.tapError((error) => Span.annotate(() => UpstreamSpan.failure(error))),
        Span.within(options.span, () => SpanAttributes.attempt(a))
      )
    }
    return Fallback.run(options.attempts, traced, options.observe).pipe(
      Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : options.accounting.release(options.reservation))
    )
  })

/**
 * A hold, its attempts and their settlement as one step a client's going away cannot split: the
 * request is interrupted while it waits for an upstream (the attempts release the hold), never
 * between the reservation and the attempts (the hold would stay taken) nor between an upstream's
 * answer and its settlement (the upstream's work is charged, as it is for a client that
 * disconnects while its answer is written).
 */
export const settledOnce = <Held, A, B, E1, E2, E3, R1, R2, R3>(
  reserve: Effect.Effect<Held, E1, R1>,
  attempts: (reservation: Held) => Effect.Effect<A, E2, R2>,
  settle: (reservation: Held, outcome: A) => Effect.Effect<B, E3, R3>
): Effect.Effect<B, E1 | E2 | E3, R1 | R2 | R3> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(reserve, (reservation) => Effect.flatMap(restore(attempts(reservation)), (outcome) => settle(reservation, outcome)))
  )
