/**
 * Why an upstream attempt failed, as one closed vocabulary of reasons, and how each reason is
 * answered: the HTTP status the caller gets, whether the plan moves on to the next provider,
 * and whether the failure counts against the endpoint's health.
 *
 * **Details**
 *
 * A failure is an {@link UpstreamFailure} carrying the provider, the endpoint id and a tagged
 * `reason`. Build one from plain data: {@link fromResponse} for a raw non-2xx answer (status,
 * headers, body text), {@link fromAttempt} for what an adapter reports (`HttpStatus`,
 * `Timeout`, `Unreachable`, `ConnectionReset`, `InvalidResponse`, `WidthMismatch`,
 * `UnsupportedInput`).
 *
 * Providers disagree on which status carries which fact, so a reason is derived from the
 * status first and refined by the provider's own error code and message where they say more
 * (a 429 with `insufficient_quota` is a quota problem, not a rate limit; a 400 naming an
 * unknown model is `ModelNotFound`).
 *
 * | reason           | status | class         | counts against endpoint |
 * |------------------|--------|---------------|-------------------------|
 * | RateLimited      | 429    | next_provider | yes |
 * | QuotaExhausted   | 502    | next_provider | yes |
 * | AuthFailed       | 502    | next_provider | yes |
 * | InvalidRequest   | 400    | stop *        | no  |
 * | InputTooLarge    | 413    | next_provider | no  |
 * | ModelNotFound    | 502    | next_provider | yes |
 * | UnsupportedInput | 400    | next_provider | no  |
 * | Timeout          | 524    | next_provider | yes |
 * | Overloaded       | 529    | next_provider | yes |
 * | Unavailable      | 503    | next_provider | yes |
 * | ServerError      | 502    | next_provider | yes |
 * | Unreachable      | 502    | next_provider | yes |
 * | ConnectionLost   | 502    | next_provider | yes |
 * | InvalidResponse  | 502    | next_provider | yes |
 * | Unknown          | 502    | stop          | no  |
 *
 * (*) `next_provider` when the provider's message names a limit of its own (context length,
 * batch size, unsupported parameter), which another provider may not share.
 *
 * The gateway's own account problems with a provider (bad key, exhausted quota, unknown
 * upstream model) are 502: the caller did nothing wrong and must not be told its own key or
 * credits failed.
 *
 * **Gotchas**
 *
 * Upstream messages reach the caller only after redaction of anything shaped like a
 * credential, and never for `AuthFailed`.
 *
 * @see https://github.com/maximhq/bifrost/blob/main/core/schemas/failureclass.go
 * @since 0.1.0
 */
import { Clock, Effect, Option, Schema } from "effect"
import type { ApiError } from "../errors/ApiError.ts"
import { fromStatus } from "../errors/ApiError.ts"
import type { FailureClass } from "./FailureClass.ts"

const Status = Schema.Int
const optionalText = Schema.optionalKey(Schema.String)

/** The provider is rate limiting the gateway. @since 0.1.0 */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  upstream_status: Status,
  retry_after_ms: Schema.optionalKey(Schema.Finite),
  provider_message: optionalText
}) {}
/** The gateway's account with the provider is out of credit or quota. @since 0.1.0 */
export class QuotaExhausted extends Schema.TaggedError<QuotaExhausted>()("QuotaExhausted", {
  upstream_status: Status,
  provider_message: optionalText
}) {}
/** The provider rejected the gateway's credential or permissions. @since 0.1.0 */
export class AuthFailed extends Schema.TaggedError<AuthFailed>()("AuthFailed", {
  upstream_status: Status
}) {}
/** The provider refused the request as invalid. @since 0.1.0 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  upstream_status: Status,
  provider_message: optionalText,
  provider_code: optionalText
}) {}
/** The input exceeds the provider's size limit. @since 0.1.0 */
export class InputTooLarge extends Schema.TaggedError<InputTooLarge>()("InputTooLarge", {
  upstream_status: Status,
  provider_message: optionalText
}) {}
/** The provider does not know the upstream model the catalog names. @since 0.1.0 */
export class ModelNotFound extends Schema.TaggedError<ModelNotFound>()("ModelNotFound", {
  upstream_status: Status,
  provider_message: optionalText
}) {}
/** The adapter cannot express this input for the provider; nothing was sent. @since 0.1.0 */
export class UnsupportedInput extends Schema.TaggedError<UnsupportedInput>()("UnsupportedInput", {
  detail: Schema.String
}) {}
/** No complete answer within the time limit (or the provider reported a timeout). @since 0.1.0 */
export class Timeout extends Schema.TaggedError<Timeout>()("Timeout", {
  timeout_ms: Schema.optionalKey(Schema.Finite),
  upstream_status: Schema.optionalKey(Status)
}) {}
/** The provider says it is overloaded (529). @since 0.1.0 */
export class Overloaded extends Schema.TaggedError<Overloaded>()("Overloaded", {
  upstream_status: Status,
  retry_after_ms: Schema.optionalKey(Schema.Finite)
}) {}
/** The provider says it is temporarily unavailable (503). @since 0.1.0 */
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", {
  upstream_status: Status,
  retry_after_ms: Schema.optionalKey(Schema.Finite)
}) {}
/** The provider failed with a server error. @since 0.1.0 */
export class ServerError extends Schema.TaggedError<ServerError>()("ServerError", {
  upstream_status: Status,
  provider_message: optionalText
}) {}
/** No connection could be made; the provider never saw the request. @since 0.1.0 */
export class Unreachable extends Schema.TaggedError<Unreachable>()("Unreachable", {
  detail: Schema.String
}) {}
/** The connection broke after the request was sent. @since 0.1.0 */
export class ConnectionLost extends Schema.TaggedError<ConnectionLost>()("ConnectionLost", {
  detail: Schema.String
}) {}
/** A 2xx answer that breaks the provider's contract (bad JSON, wrong count or width of vectors). @since 0.1.0 */
export class InvalidResponse extends Schema.TaggedError<InvalidResponse>()("InvalidResponse", {
  detail: Schema.String
}) {}
/** A status the gateway has no rule for. @since 0.1.0 */
export class Unknown extends Schema.TaggedError<Unknown>()("Unknown", {
  upstream_status: Status,
  provider_message: optionalText
}) {}

/**
 * Every reason, as a schema.
 *
 * @since 0.1.0
 */
export const Reason = Schema.Union([
  RateLimited,
  QuotaExhausted,
  AuthFailed,
  InvalidRequest,
  InputTooLarge,
  ModelNotFound,
  UnsupportedInput,
  Timeout,
  Overloaded,
  Unavailable,
  ServerError,
  Unreachable,
  ConnectionLost,
  InvalidResponse,
  Unknown
])

/**
 * @since 0.1.0
 */
export type Reason = typeof Reason.Type

/**
 * The tag of a reason.
 *
 * @since 0.1.0
 */
export type ReasonTag = Reason["_tag"]

/**
 * The tags of every reason, read off {@link Reason}.
 *
 * @since 0.1.0
 */
export const reasonTags: ReadonlyArray<ReasonTag> = Reason.members.map(
  (member) => (member as unknown as { readonly identifier: ReasonTag }).identifier
)

/**
 * The HTTP statuses a failure can be answered with.
 *
 * @since 0.1.0
 */
export type WireStatus = 400 | 413 | 429 | 502 | 503 | 524 | 529

/**
 * How each reason is answered (see the module table).
 *
 * @since 0.1.0
 */
export const policy: {
  readonly [K in ReasonTag]: {
    readonly status: WireStatus
    readonly failureClass: FailureClass
    readonly countsAgainstEndpoint: boolean
  }
} = {
  RateLimited: { status: 429, failureClass: "next_provider", countsAgainstEndpoint: true },
  QuotaExhausted: { status: 502, failureClass: "next_provider", countsAgainstEndpoint: true },
  AuthFailed: { status: 502, failureClass: "next_provider", countsAgainstEndpoint: true },
  InvalidRequest: { status: 400, failureClass: "stop", countsAgainstEndpoint: false },
  InputTooLarge: { status: 413, failureClass: "next_provider", countsAgainstEndpoint: false },
  ModelNotFound: { status: 502, failureClass: "next_provider", countsAgainstEndpoint: true },
  UnsupportedInput: { status: 400, failureClass: "next_provider", countsAgainstEndpoint: false },
  Timeout: { status: 524, failureClass: "next_provider", countsAgainstEndpoint: true },
  Overloaded: { status: 529, failureClass: "next_provider", countsAgainstEndpoint: true },
  Unavailable: { status: 503, failureClass: "next_provider", countsAgainstEndpoint: true },
  ServerError: { status: 502, failureClass: "next_provider", countsAgainstEndpoint: true },
  Unreachable: { status: 502, failureClass: "next_provider", countsAgainstEndpoint: true },
  ConnectionLost: { status: 502, failureClass: "next_provider", countsAgainstEndpoint: true },
  InvalidResponse: { status: 502, failureClass: "next_provider", countsAgainstEndpoint: true },
  Unknown: { status: 502, failureClass: "stop", countsAgainstEndpoint: false }
}

const providerLimit =
  /context[ _-]?length|too (long|many|large)|maximum|max(imum)?[ _-]?(input|tokens|batch|items)|exceed|limit|not supported|unsupported|does not support/iu

/**
 * The fallback class of a reason: {@link policy}'s, except that an `InvalidRequest` whose
 * provider message names a limit of that provider moves on to the next provider.
 *
 * @since 0.1.0
 */
export const failureClassOf = (reason: Reason): FailureClass => {
  if (reason._tag === "InvalidRequest") {
    const signal = `${reason.provider_code ?? ""} ${reason.provider_message ?? ""}`
    if (providerLimit.test(signal)) return "next_provider"
  }
  return policy[reason._tag].failureClass
}

const seconds = (ms: number) => `${Math.ceil(ms / 1000)}s`

const redact = (text: string): string =>
  text
    .replace(/\b(sk|pk|rk|pa|key)[-_][A-Za-z0-9_*.-]{6,}/giu, "[redacted]")
    .replace(/\bAIza[0-9A-Za-z_-]{10,}/gu, "[redacted]")
    .replace(/\bBearer\s+\S+/giu, "Bearer [redacted]")
    .replace(/\b(api[_-]?key|token|secret|password)(["']?\s*[:=]\s*["']?)[^\s"',}]+/giu, "$1$2[redacted]")
    .slice(0, 500)

/**
 * The upstream message as it may be shown to the caller: credential-shaped substrings
 * redacted, at most 500 characters.
 *
 * @since 0.1.0
 */
export const safeMessage = redact

/**
 * One failed attempt at one endpoint.
 *
 * **When to use**
 *
 * Collect one per attempt while running a plan; use {@link UpstreamFailure.failureClass} to
 * decide whether to try the next endpoint, {@link UpstreamFailure.countsAgainstEndpoint} to
 * decide whether to record a failure in the endpoint's health, and {@link toApiError} to
 * answer the caller when no attempt succeeded.
 *
 * @since 0.1.0
 */
export class UpstreamFailure extends Schema.TaggedError<UpstreamFailure>()("UpstreamFailure", {
  provider: Schema.String,
  endpoint: Schema.String,
  reason: Reason
}) {
  /** The HTTP status the caller is answered with. */
  get status(): WireStatus {
    return policy[this.reason._tag].status
  }
  /** Whether the plan moves on to its next endpoint. */
  get failureClass(): FailureClass {
    return failureClassOf(this.reason)
  }
  /** Whether the failure says something about the endpoint's health. */
  get countsAgainstEndpoint(): boolean {
    return policy[this.reason._tag].countsAgainstEndpoint
  }
  override get message(): string {
    const p = JSON.stringify(this.provider)
    const r = this.reason
    const said = (m: string | undefined) => (m === undefined || m === "" ? "" : `: ${redact(m)}`)
    switch (r._tag) {
      case "RateLimited":
        return `Provider ${p} is rate limiting requests${r.retry_after_ms === undefined ? "" : `; retry after ${seconds(r.retry_after_ms)}`}`
      case "QuotaExhausted":
        return `Provider ${p} refused the request: the gateway's account with it has no quota left`
      case "AuthFailed":
        return `Provider ${p} rejected the gateway's credentials`
      case "InvalidRequest":
        return `Provider ${p} rejected the request${said(r.provider_message)}`
      case "InputTooLarge":
        return `The input is too large for provider ${p}${said(r.provider_message)}`
      case "ModelNotFound":
        return `Provider ${p} does not serve the configured model${said(r.provider_message)}`
      case "UnsupportedInput":
        return `Provider ${p} cannot take this input: ${redact(r.detail)}`
      case "Timeout":
        return `Provider ${p} did not answer in time${r.timeout_ms === undefined ? "" : ` (${r.timeout_ms} ms)`}`
      case "Overloaded":
        return `Provider ${p} is overloaded`
      case "Unavailable":
        return `Provider ${p} is temporarily unavailable`
      case "ServerError":
        return `Provider ${p} failed with status ${r.upstream_status}${said(r.provider_message)}`
      case "Unreachable":
        return `Provider ${p} could not be reached: ${redact(r.detail)}`
      case "ConnectionLost":
        return `The connection to provider ${p} broke before the answer arrived: ${redact(r.detail)}`
      case "InvalidResponse":
        return `Provider ${p} returned an invalid response: ${redact(r.detail)}`
      case "Unknown":
        return `Provider ${p} answered with unexpected status ${r.upstream_status}${said(r.provider_message)}`
    }
  }
}

/**
 * The caller-facing error of a failure: the status of its reason, its message, and metadata
 * `{ provider_name, endpoint, reason, upstream_status?, retry_after_ms?, raw? }` (`raw` is the
 * redacted provider message, never present for `AuthFailed`).
 *
 * @since 0.1.0
 */
export const toApiError = (failure: UpstreamFailure): ApiError => {
  const r = failure.reason as Reason & {
    readonly upstream_status?: number
    readonly retry_after_ms?: number
    readonly provider_message?: string
  }
  const metadata: Record<string, unknown> = {
    provider_name: failure.provider,
    endpoint: failure.endpoint,
    reason: r._tag
  }
  if (r.upstream_status !== undefined) metadata.upstream_status = r.upstream_status
  if (r.retry_after_ms !== undefined) metadata.retry_after_ms = r.retry_after_ms
  if (r._tag !== "AuthFailed" && r.provider_message !== undefined) metadata.raw = redact(r.provider_message)
  return fromStatus(failure.status, failure.message, metadata)
}

/**
 * Rate-limit facts read from response headers.
 *
 * @since 0.1.0
 */
export interface RateLimitInfo {
  readonly retry_after_ms?: number
  readonly limit_requests?: string
  readonly remaining_requests?: number
  readonly reset_requests_ms?: number
  readonly reset_tokens_ms?: number
}

/**
 * Headers as plain data; names are matched case-insensitively.
 *
 * @since 0.1.0
 */
export type Headers = { readonly [name: string]: string | undefined }

const durationMs = (text: string): number | undefined => {
  const trimmed = text.trim()
  if (/^\d+(\.\d+)?$/u.test(trimmed)) return Number(trimmed) * 1000
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/gu)]
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== trimmed) return undefined
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const
  return parts.reduce((total, p) => total + Number(p[1]) * unit[p[2] as keyof typeof unit], 0)
}

/**
 * Reads `retry-after` (seconds or an HTTP date), `retry-after-ms` and the
 * `x-ratelimit-*-requests` / `x-ratelimit-reset-tokens` headers.
 *
 * @since 0.1.0
 */
export const parseRateLimitHeaders = (headers: Headers, now: number): RateLimitInfo => {
  const h = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))
  const out: { -readonly [K in keyof RateLimitInfo]: RateLimitInfo[K] } = {}
  const ms = h.get("retry-after-ms")
  const after = h.get("retry-after")
  if (ms !== undefined && /^\d+(\.\d+)?$/u.test(ms.trim())) {
    out.retry_after_ms = Number(ms.trim())
  } else if (after !== undefined) {
    if (/^\d+(\.\d+)?$/u.test(after.trim())) out.retry_after_ms = Number(after.trim()) * 1000
    else {
      const at = Date.parse(after)
      if (!Number.isNaN(at)) out.retry_after_ms = Math.max(0, at - now)
    }
  }
  const limit = h.get("x-ratelimit-limit-requests")
  if (limit !== undefined) out.limit_requests = limit
  const remaining = Number(h.get("x-ratelimit-remaining-requests") ?? Number.NaN)
  if (Number.isFinite(remaining)) out.remaining_requests = remaining
  const resetRequests = h.get("x-ratelimit-reset-requests")
  const resetRequestsMs = resetRequests === undefined ? undefined : durationMs(resetRequests)
  if (resetRequestsMs !== undefined) out.reset_requests_ms = resetRequestsMs
  const resetTokens = h.get("x-ratelimit-reset-tokens")
  const resetTokensMs = resetTokens === undefined ? undefined : durationMs(resetTokens)
  if (resetTokensMs !== undefined) out.reset_tokens_ms = resetTokensMs
  return out
}

const Code = Schema.optionalKey(Schema.NullOr(Schema.Union([Schema.String, Schema.Finite])))

// The error bodies of the providers in the built-in catalog: OpenAI and its imitators, Google
// (`error.status`), Cohere and Mistral (`message`), Voyage and Jina (`detail`).
const ErrorBody = Schema.Union([
  Schema.Struct({
    error: Schema.Struct({
      message: Schema.optionalKey(Schema.NullOr(Schema.String)),
      type: Schema.optionalKey(Schema.NullOr(Schema.String)),
      code: Code,
      status: Schema.optionalKey(Schema.String)
    })
  }),
  Schema.Struct({ error: Schema.String }),
  Schema.Struct({ message: Schema.String, type: Schema.optionalKey(Schema.NullOr(Schema.String)), code: Code }),
  Schema.Struct({ detail: Schema.Union([Schema.String, Schema.Array(Schema.Struct({ msg: Schema.String }))]) })
])
const ErrorBodyJson = Schema.fromJsonString(ErrorBody)

/**
 * What a provider's error body says, when it is one of the known shapes.
 *
 * @since 0.1.0
 */
export interface ProviderDetails {
  readonly message?: string | undefined
  readonly code?: string | undefined
}

/**
 * Parses a provider's error body (OpenAI, Google, Cohere, Mistral, Voyage and Jina shapes);
 * anything else gives `{}`.
 *
 * @since 0.1.0
 */
export const parseErrorBody = (body: string): ProviderDetails =>
  Schema.decodeUnknownOption(ErrorBodyJson)(body).pipe(
    Option.map((b): ProviderDetails => {
      if ("detail" in b) {
        return { message: typeof b.detail === "string" ? b.detail : b.detail.map((d) => d.msg).join("; ") }
      }
      if ("message" in b) return { message: b.message, code: b.code == null ? b.type ?? undefined : String(b.code) }
      if (typeof b.error === "string") return { message: b.error }
      const e = b.error
      const code = e.code == null ? undefined : String(e.code)
      return { message: e.message ?? undefined, code: e.status ?? code ?? e.type ?? undefined }
    }),
    Option.getOrElse((): ProviderDetails => ({}))
  )

const quota = /insufficient[_ ]quota|billing|credit|payment|balance|quota exceeded/iu
const missingModel =
  /model\b[^.;]{0,80}?\b(not found|does not exist|not exist|is not available|not supported|unsupported)|\b(unknown|invalid|unsupported|no such) model\b/iu

/**
 * The facts of a non-2xx answer that decide its reason.
 *
 * @since 0.1.0
 */
export interface StatusFacts {
  readonly status: number
  readonly message?: string | undefined
  readonly code?: string | undefined
  readonly retry_after_ms?: number | undefined
}

const text = (key: "provider_message" | "provider_code", value: string | undefined) =>
  value === undefined || value === "" ? {} : { [key]: value } as Record<typeof key, string>

/**
 * Maps a non-2xx answer to its reason: by status, refined by the provider's code and message.
 *
 * @since 0.1.0
 */
export const reasonOfStatus = (facts: StatusFacts): Reason => {
  const { status } = facts
  const message = text("provider_message", facts.message)
  const retry = facts.retry_after_ms === undefined ? {} : { retry_after_ms: facts.retry_after_ms }
  const signal = `${facts.code ?? ""} ${facts.message ?? ""}`
  if (status === 402 || (status === 429 && quota.test(signal))) return new QuotaExhausted({ upstream_status: status, ...message })
  if (status === 429) return new RateLimited({ upstream_status: status, ...retry, ...message })
  if (status === 401 || status === 403) return new AuthFailed({ upstream_status: status })
  if (status === 404) return new ModelNotFound({ upstream_status: status, ...message })
  if (status === 408 || status === 504 || status === 524) return new Timeout({ upstream_status: status })
  if (status === 413) return new InputTooLarge({ upstream_status: status, ...message })
  if (status === 529) return new Overloaded({ upstream_status: status, ...retry })
  if (status === 503) return new Unavailable({ upstream_status: status, ...retry })
  if (status >= 400 && status < 500) {
    if (missingModel.test(signal)) return new ModelNotFound({ upstream_status: status, ...message })
    return new InvalidRequest({ upstream_status: status, ...message, ...text("provider_code", facts.code) })
  }
  if (status >= 500 && status < 600) return new ServerError({ upstream_status: status, ...message })
  return new Unknown({ upstream_status: status, ...message })
}

/**
 * Which endpoint an attempt was made at.
 *
 * @since 0.1.0
 */
export interface AttemptContext {
  readonly provider: string
  readonly endpoint: string
}

/**
 * A raw non-2xx answer, as plain data.
 *
 * @since 0.1.0
 */
export interface UpstreamResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: string
}

/**
 * Maps a raw non-2xx answer to a failure: parses the error body and the rate-limit headers
 * (an HTTP-date `retry-after` is measured against the `Clock`).
 *
 * @since 0.1.0
 */
export const fromResponse = Effect.fnUntraced(function*(response: UpstreamResponse, context: AttemptContext) {
  const now = yield* Clock.currentTimeMillis
  const details = parseErrorBody(response.body)
  const limits = parseRateLimitHeaders(response.headers, now)
  const retry = limits.retry_after_ms ?? (response.status === 429 ? limits.reset_requests_ms : undefined)
  return new UpstreamFailure({
    ...context,
    reason: reasonOfStatus({ status: response.status, ...details, retry_after_ms: retry })
  })
})

/**
 * What an adapter reports about a failed attempt (the shapes of `EmbeddingProvider`'s
 * `UpstreamErrorReason`).
 *
 * @since 0.1.0
 */
export type AttemptFailure =
  | {
    readonly _tag: "HttpStatus"
    readonly status: number
    readonly body: string
    readonly message?: string | undefined
    readonly code?: string | undefined
    readonly retryAfterMs?: number | undefined
  }
  | { readonly _tag: "Timeout"; readonly timeoutMs: number }
  | { readonly _tag: "Unreachable"; readonly detail: string }
  | { readonly _tag: "ConnectionReset"; readonly detail: string }
  | { readonly _tag: "InvalidResponse"; readonly detail: string }
  | { readonly _tag: "WidthMismatch"; readonly expected: number; readonly got: number }
  | { readonly _tag: "UnsupportedInput"; readonly detail: string }

/**
 * Maps what an adapter reports to a failure. A status answer without a parsed message or code
 * has its body parsed here.
 *
 * @since 0.1.0
 */
export const fromAttempt = (failure: AttemptFailure, context: AttemptContext): UpstreamFailure => {
  const reason = ((): Reason => {
    switch (failure._tag) {
      case "HttpStatus": {
        const parsed = failure.message === undefined && failure.code === undefined ? parseErrorBody(failure.body) : {}
        return reasonOfStatus({
          status: failure.status,
          message: failure.message ?? parsed.message,
          code: failure.code ?? parsed.code,
          retry_after_ms: failure.retryAfterMs
        })
      }
      case "Timeout":
        return new Timeout({ timeout_ms: failure.timeoutMs })
      case "Unreachable":
        return new Unreachable({ detail: failure.detail })
      case "ConnectionReset":
        return new ConnectionLost({ detail: failure.detail })
      case "InvalidResponse":
        return new InvalidResponse({ detail: failure.detail })
      case "WidthMismatch":
        return new InvalidResponse({
          detail: `expected vectors of ${failure.expected} dimensions, got ${failure.got}`
        })
      case "UnsupportedInput":
        return new UnsupportedInput({ detail: failure.detail })
    }
  })()
  return new UpstreamFailure({ ...context, reason })
}
