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
 * random 50–100 % of it). A `Retry-After` header (seconds or an HTTP date) raises the wait to what
 * it asks; when it asks for more than `maxRetryAfter`, the client does not wait and returns the
 * answer as it is. At most `retries` retries are made.
 *
 * @since 0.1.0
 */
import { Clock, Duration, Effect, Option, Random, Result } from "effect"
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
export const transientStatuses: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 524, 529])

/**
 * The transient statuses that mean the server did no work (it refused the request before
 * starting), so any request may be sent again.
 *
 * @since 0.1.0
 */
export const refusedStatuses: ReadonlySet<number> = new Set([429, 503, 529])

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
 * The wait before the next attempt, or `None` when the outcome is final.
 *
 * **Details**
 *
 * `retry` counts the retries already made (0 before the first retry); `now` is the current time
 * in milliseconds (for a `Retry-After` date) and `random` a number in [0, 1) for the jitter.
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
  const { outcome } = input
  if (input.retry >= policy.retries) return Option.none()
  if (outcome._tag === "Answered") {
    if (!transientStatuses.has(outcome.status)) return Option.none()
    if (!input.replaySafe && !refusedStatuses.has(outcome.status)) return Option.none()
  } else if (!input.replaySafe && outcome.sent) {
    return Option.none()
  }
  const base = Duration.toMillis(Duration.fromInputUnsafe(policy.baseDelay))
  const cap = Duration.toMillis(Duration.fromInputUnsafe(policy.maxDelay))
  const backoff = Math.min(cap, base * 2 ** input.retry) * (0.5 + input.random / 2)
  const asked = outcome._tag === "Answered" ? retryAfterMillis(outcome.retryAfter, input.now) : undefined
  if (asked !== undefined && asked > Duration.toMillis(Duration.fromInputUnsafe(policy.maxRetryAfter))) {
    return Option.none()
  }
  return Option.some(Duration.millis(Math.round(Math.max(backoff, asked ?? 0))))
}

/**
 * The wait a `Retry-After` header asks for, in milliseconds (never negative), or `undefined`
 * when the header is absent or malformed.
 *
 * @since 0.1.0
 */
export const retryAfterMillis = (header: string | undefined, now: number): number | undefined => {
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

const outcomeOf = (
  result: Result.Result<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>
): Outcome | undefined => {
  if (Result.isSuccess(result)) {
    const response = result.success
    return transientStatuses.has(response.status)
      ? { _tag: "Answered", status: response.status, retryAfter: response.headers["retry-after"] }
      : undefined
  }
  const error = result.failure
  return error.reason._tag === "TransportError"
    ? { _tag: "TransportFailed", sent: !neverSent(error.reason.cause) }
    : undefined
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
    const attempt = (retry: number): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
      Effect.flatMap(Effect.result(once), (result) => {
        const outcome = outcomeOf(result)
        if (outcome === undefined) return Effect.fromResult(result)
        return Effect.flatMap(
          Effect.all([Clock.currentTimeMillis, Random.next]),
          ([now, random]) =>
            Option.match(decide(policy, { outcome, replaySafe, retry, now, random }), {
              onNone: () => Effect.fromResult(result),
              onSome: (wait) => Effect.andThen(Effect.sleep(wait), attempt(retry + 1))
            })
        )
      })
    return attempt(0)
  })
