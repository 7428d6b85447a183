import { RequestTimedOut } from "@switchyard/core/errors/EmbeddingsError"
import type { Accounting, Reservation } from "@switchyard/core/store/Accounting"
import * as Fallback from "@switchyard/core/upstream/Fallback"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Duration, Effect, Exit } from "effect"
import * as Span from "../observability/Span.ts"
import * as SpanAttributes from "../observability/SpanAttributes.ts"

/**
 * A request's attempts run under its hold, whatever the task: each attempt in its own span, in the
 * plan's fallback order, all within the request's time limit; when none succeeds (or the time runs
 * out), the hold is released.
 */
export const run = <A>(options: {
  readonly accounting: Accounting["Service"]
  readonly reservation: Reservation
  readonly attempts: ReadonlyArray<Fallback.Attempt>
  readonly call: (attempt: Fallback.Attempt) => Effect.Effect<A, UpstreamError.UpstreamError>
  readonly observe: (observed: Fallback.Observed<A>) => Effect.Effect<void>
  /** The attempt span's name (`Embeddings.attempt`). */
  readonly span: string
  /** The upstream's input tokens of a successful attempt, for its span. */
  readonly tokensOf: (value: A) => number
  readonly timeoutMs: number
}) => {
  const traced = (a: Fallback.Attempt) => {
    const slug = a.candidate.provider.slug
    return options.call(a).pipe(
      // The failure names its provider, so the span's error does too.
      Effect.mapError(UpstreamError.atProvider(slug)),
      Effect.tap((value) => Span.annotate(() => SpanAttributes.usage(options.tokensOf(value)))),
      Span.within(options.span, () => SpanAttributes.attempt(a))
    )
  }
  return Fallback.run(options.attempts, traced, options.observe).pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(options.timeoutMs),
      orElse: () => Effect.fail(new RequestTimedOut({ timeoutMs: options.timeoutMs }))
    }),
    Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : options.accounting.release(options.reservation))
  )
}
