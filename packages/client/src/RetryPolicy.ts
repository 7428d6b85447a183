/**
 * When the client sends a request again, and how long it waits first.
 *
 * **Details**
 *
 * Only a transient failure is retried: an answer with status 408, 429, 500, 502, 503, 524 or
 * 529, or a transport failure (no connection, a dropped connection, no answer in time). Every
 * other status, and every 4xx other than 408 and 429, is final.
 *
 * A transient failure is retried only when sending the request again cannot do anything twice:
 *
 * - the request is replay-safe: `GET`, `HEAD`, `OPTIONS`, `PUT` or `DELETE`, or `POST /embeddings`,
 *   `POST /rerank` and their `/plan` (computations that change nothing but the usage counters,
 *   which count answered requests only); or
 * - the answer says the server did no work: 429, 503 or 529 (refused before it started); or
 * - the request never left: the connection was refused or the host name did not resolve.
 *
 * So a `PATCH` that answers 500 or a `POST .../suspend` whose connection drops is not sent again:
 * the caller sees the error and decides.
 *
 * The wait before retry `n` (from 0) is `baseDelay * 2^n`, capped at `maxDelay`, with jitter (a
 * random 50–100 % of it): an Effect `Schedule` ({@link schedule}) driving `Effect.retry`, so the
 * waits run on Effect's `Clock`. A `Retry-After` header (seconds or an HTTP date) raises the wait to what
 * it asks; when it asks for more than `maxRetryAfter`, the client does not wait and returns the
 * answer as it is. At most `retries` retries are made.
 *
 * @since 0.1.0
 */
import { Clock, Data, Duration, Effect, Option, Random, Result, Schedule } from "effect"
import { Headers, HttpClient, HttpClientError, type HttpClientRequest, type HttpClientResponse } from "effect/http"

/**
 * The bounds of the retry loop.
 *
 * @since 0.1.0
 */
export interface RetryPolicy {
  /** How many times a request is sent again at most (0 turns retries off). */
  readonly retries: number
  /** The wait before the first retry; it doubles for each further one. */
  readonly baseDelay: Duration.Input
  /** The longest wait the backoff reaches. */
  readonly maxDelay: Duration.Input
  /** The longest `Retry-After` the client honours; a longer one ends the retries. */
  readonly maxRetryAfter: Duration.Input
}

/**
 * 3 retries, 250 ms doubling to at most 8 s, `Retry-After` honoured up to 60 s.
 *
 * @since 0.1.0
 */
export const defaults: RetryPolicy = {
  retries: 3,
  baseDelay: "250 millis",
  maxDelay: "8 seconds",
  maxRetryAfter: "60 seconds"
}

/**
 * The statuses worth another attempt.
 *
 * @since 0.1.0
 */
const transientStatuses: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 524, 529])

/**
 * The transient statuses that mean the server did no work (it refused the request before
 * starting), so any request may be sent again.
 *
 * @since 0.1.0
 */
const refusedStatuses: ReadonlySet<number> = new Set([429, 503, 529])

const replaySafeMethods: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"])

/**
 * Whether sending the request twice has the effect of sending it once.
 *
 * @since 0.1.0
 */
export const isReplaySafe = (request: { readonly method: string; readonly url: string }): boolean => {
  if (replaySafeMethods.has(request.method)) return true
  if (request.method !== "POST") return false
  const path = URL.canParse(request.url) ? new URL(request.url).pathname : request.url.split("?")[0] ?? ""
  return /\/(embeddings|rerank)(\/plan)?$/u.test(path)
}

/**
 * How one attempt ended, as far as the retry decision is concerned.
 *
 * @since 0.1.0
 */
export type Outcome =
  | { readonly _tag: "Answered"; readonly status: number; readonly retryAfter: string | undefined }
  | { readonly _tag: "TransportFailed"; readonly sent: boolean }

/**
 * Whether an outcome is worth another attempt: a transient status or a transport failure, on a
 * request that is replay-safe or that the server refused (or that never left), and no longer a
 * `Retry-After` than the policy honours. `retryAfter` is the wait the answer asks for, in
 * milliseconds.
 *
 * @since 0.4.0
 */
const retryable = (
  policy: RetryPolicy,
  input: { readonly outcome: Outcome; readonly replaySafe: boolean; readonly retryAfter: number | undefined }
): boolean => {
  const { outcome } = input
  if (outcome._tag === "Answered") {
    if (!transientStatuses.has(outcome.status)) return false
    if (!input.replaySafe && !refusedStatuses.has(outcome.status)) return false
  } else if (!input.replaySafe && outcome.sent) {
    return false
  }
  return input.retryAfter === undefined || input.retryAfter <= Duration.toMillis(Duration.fromInputUnsafe(policy.maxRetryAfter))
}

/**
 * The wait before a retry: the backoff's `delay` capped at `maxDelay`, scaled by the jitter
 * (`random` in [0, 1) gives 50–100 % of it), and raised to what `Retry-After` asks.
 *
 * @since 0.4.0
 */
const wait = (
  policy: RetryPolicy,
  input: { readonly delay: Duration.Duration; readonly random: number; readonly retryAfter: number | undefined }
): Duration.Duration => {
  const cap = Duration.toMillis(Duration.fromInputUnsafe(policy.maxDelay))
  const backoff = Math.min(cap, Duration.toMillis(input.delay)) * (0.5 + input.random / 2)
  return Duration.millis(Math.round(Math.max(backoff, input.retryAfter ?? 0)))
}

/**
 * The wait before the next attempt, or `None` when the outcome is final: {@link retryable} and
 * {@link wait} for retry `retry` (from 0), the decision {@link schedule} makes step by step.
 *
 * **Details**
 *
 * `now` is the current time in milliseconds (for a `Retry-After` date) and `random` a number in
 * [0, 1) for the jitter.
 *
 * @since 0.1.0
 */
export const decide = (
  policy: RetryPolicy,
  input: {
    readonly outcome: Outcome
    readonly replaySafe: boolean
    readonly retry: number
    readonly now: number
    readonly random: number
  }
): Option.Option<Duration.Duration> => {
  const retryAfter = input.outcome._tag === "Answered" ? retryAfterMillis(input.outcome.retryAfter, input.now) : undefined
  if (input.retry >= policy.retries || !retryable(policy, { outcome: input.outcome, replaySafe: input.replaySafe, retryAfter })) {
    return Option.none()
  }
  const delay = Duration.times(Duration.fromInputUnsafe(policy.baseDelay), 2 ** input.retry)
  return Option.some(wait(policy, { delay, random: input.random, retryAfter }))
}

/**
 * An attempt that may be made again: how it ended, the wait its answer asked for, and the answer
 * or the failure to hand back when no retry follows.
 *
 * @since 0.4.0
 */
export class Retryable extends Data.TaggedError("Retryable")<{
  readonly outcome: Outcome
  readonly retryAfter: number | undefined
  readonly result: Result.Result<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>
}> {}

/**
 * The policy's backoff as an Effect `Schedule` over failed attempts: exponential from `baseDelay`,
 * capped and jittered by {@link wait}, never shorter than the attempt's `Retry-After`.
 *
 * @since 0.4.0
 */
const schedule = (policy: RetryPolicy): Schedule.Schedule<Duration.Duration, unknown> =>
  Schedule.exponential(policy.baseDelay, 2).pipe(
    Schedule.modifyDelay(({ duration, input }) =>
      Effect.map(Random.next, (random) =>
        wait(policy, { delay: duration, random, retryAfter: input instanceof Retryable ? input.retryAfter : undefined })
      )
    )
  )

/**
 * The wait a `Retry-After` header asks for, in milliseconds (never negative), or `undefined`
 * when the header is absent or malformed.
 *
 * @since 0.1.0
 */
const retryAfterMillis = (header: string | undefined, now: number): number | undefined => {
  if (header === undefined) return undefined
  const parsed = Headers.parseRetryAfter(header)
  if (Result.isFailure(parsed)) return undefined
  const value = parsed.success
  const millis = value._tag === "Duration"
    ? Duration.toMillis(value.duration)
    : value.dateTime.epochMilliseconds - now
  return Math.max(0, millis)
}

const unsentCodes: ReadonlySet<string> = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"])

const neverSent = (cause: unknown): boolean => {
  let current: unknown = cause
  for (let depth = 0; depth < 6 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { readonly code?: unknown }).code
    if (typeof code === "string" && unsentCodes.has(code)) return true
    const errors = (current as { readonly errors?: unknown }).errors
    if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => neverSent(e))) return true
    current = (current as { readonly cause?: unknown }).cause
  }
  return false
}

// An attempt's result as the retry sees it: a transient answer or transport failure becomes a
// `Retryable` failure, anything else passes through.
const classify = (
  result: Result.Result<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>,
  now: number
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError | Retryable> => {
  if (Result.isSuccess(result)) {
    const response = result.success
    if (!transientStatuses.has(response.status)) return Effect.succeed(response)
    const retryAfter = response.headers["retry-after"]
    return Effect.fail(new Retryable({
      outcome: { _tag: "Answered", status: response.status, retryAfter },
      retryAfter: retryAfterMillis(retryAfter, now),
      result
    }))
  }
  const error = result.failure
  return error.reason._tag === "TransportError"
    ? Effect.fail(new Retryable({ outcome: { _tag: "TransportFailed", sent: !neverSent(error.reason.cause) }, retryAfter: undefined, result }))
    : Effect.fail(error)
}

/**
 * Wraps an `HttpClient` so that it retries under `policy`, with an optional time limit per
 * attempt (an attempt over it fails as a transport error).
 *
 * **Gotchas**
 *
 * Apply it to the client that executes requests (`HttpApiClient.make`'s `transformClient`), so
 * every attempt carries the same headers, the bearer key included. A request body must be
 * replayable: JSON and byte bodies are, stream bodies are not.
 *
 * @since 0.1.0
 */
export const apply = (
  policy: RetryPolicy,
  options: {
    readonly timeout?: Duration.Input | undefined
    readonly replaySafe?: ((request: HttpClientRequest.HttpClientRequest) => boolean) | undefined
  } = {}
) =>
(client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transform(client, (execute, request) => {
    const timeout = options.timeout
    const once = timeout === undefined ? execute : execute.pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(
            new HttpClientError.HttpClientError({
              reason: new HttpClientError.TransportError({
                request,
                description: `no answer within ${Duration.format(Duration.fromInputUnsafe(timeout))}`
              })
            })
          )
      })
    )
    const replaySafe = (options.replaySafe ?? isReplaySafe)(request)
    const attempt = Effect.result(once).pipe(
      Effect.flatMap((result) => Effect.flatMap(Clock.currentTimeMillis, (now) => classify(result, now)))
    )
    return attempt.pipe(
      Effect.retry({
        schedule: schedule(policy),
        times: policy.retries,
        while: (error: HttpClientError.HttpClientError | Retryable) => error._tag === "Retryable" && retryable(policy, { outcome: error.outcome, replaySafe, retryAfter: error.retryAfter })
      }),
      // No retry follows: the last answer (or transport failure) is the caller's.
      Effect.catchTag("Retryable", (last) => Effect.fromResult(last.result))
    )
  })
