/**
 * The one reader of an upstream provider's non-2xx answer: its error body, its `Retry-After`,
 * and the {@link UpstreamError} they make.
 *
 * **Details**
 *
 * Providers disagree on which status carries which fact, so a reason is derived from the
 * status first and refined by the provider's own error code and message where they say more
 * (a 429 with `insufficient_quota` is a quota problem, not a rate limit; a 400 naming an
 * unknown model is `ModelNotFound`).
 *
 * Error bodies come in the shapes of the providers in the built-in catalog: OpenAI and its
 * imitators (`{ error: { message, type, code } }` or `{ error: "..." }`), Google
 * (`{ error: { code, message, status, details } }`, whose `ErrorInfo` reason and `RetryInfo` delay
 * are read), Cohere and Mistral (`{ message, type, code }`, the message possibly structured),
 * Voyage and Jina (FastAPI's `{ detail }`). Anything else carries no details.
 *
 * The wait comes from `retry-after-ms`, then `Retry-After` (read with Effect's
 * `Headers.parseRetryAfter`: whole seconds or an HTTP date, measured against `now`), then a
 * Google `RetryInfo` delay, then, for a 429, OpenAI's `x-ratelimit-reset-requests`.
 *
 * @since 0.1.0
 */
import { Duration, Option, Result, Schema } from "effect"
import { Headers } from "effect/http"
import {
  AuthFailed,
  InputTooLarge,
  InvalidRequest,
  ModelNotFound,
  Overloaded,
  QuotaExhausted,
  RateLimited,
  type Reason,
  ServerError,
  Timeout,
  Unavailable,
  Unknown,
  UpstreamError
} from "./UpstreamError.ts"

/**
 * What a provider's error body says, when it is one of the known shapes.
 *
 * @since 0.1.0
 */
export interface ProviderDetails {
  readonly message?: string
  readonly code?: string
  readonly retryAfterMs?: number
}

const Code = Schema.optionalKey(Schema.NullOr(Schema.Union([Schema.String, Schema.Finite])))

const ErrorObject = Schema.Struct({
  message: Schema.optionalKey(Schema.NullOr(Schema.String)),
  type: Schema.optionalKey(Schema.NullOr(Schema.String)),
  code: Code,
  status: Schema.optionalKey(Schema.String),
  details: Schema.optionalKey(Schema.Array(Schema.Struct({
    "@type": Schema.optionalKey(Schema.String),
    reason: Schema.optionalKey(Schema.String),
    retryDelay: Schema.optionalKey(Schema.String)
  })))
})

const ErrorBody = Schema.Union([
  Schema.Struct({ error: Schema.Union([Schema.String, ErrorObject]) }),
  Schema.Struct({ message: Schema.Unknown, type: Schema.optionalKey(Schema.NullOr(Schema.String)), code: Code }),
  Schema.Struct({ detail: Schema.Unknown })
])

const decodeBody = Schema.decodeUnknownOption(Schema.fromJsonString(ErrorBody))

const text = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (value === undefined || value === null) return undefined
  return JSON.stringify(value)
}

const codeText = (value: string | number | null | undefined): string | undefined =>
  value === null || value === undefined ? undefined : String(value)

const compact = (details: { message?: string | undefined; code?: string | undefined; retryAfterMs?: number | undefined }): ProviderDetails => {
  const out: { message?: string; code?: string; retryAfterMs?: number } = {}
  if (details.message !== undefined && details.message !== "") out.message = details.message
  if (details.code !== undefined && details.code !== "") out.code = details.code
  if (details.retryAfterMs !== undefined) out.retryAfterMs = details.retryAfterMs
  return out
}

const delaySeconds = /^(\d+(?:\.\d+)?)s$/u

const ofErrorObject = (error: typeof ErrorObject.Type): ProviderDetails => {
  const details = error.details ?? []
  const reason = details.find((d) => d["@type"]?.endsWith("google.rpc.ErrorInfo") && d.reason)?.reason
  const delay = details.find((d) => d["@type"]?.endsWith("google.rpc.RetryInfo") && d.retryDelay)?.retryDelay
  const match = delay === undefined ? null : delaySeconds.exec(delay)
  // Google's numeric `code` repeats the HTTP status; its `status` names the fact.
  const code = typeof error.code === "number" && error.status !== undefined ? undefined : codeText(error.code)
  return compact({
    message: error.message ?? undefined,
    code: reason ?? error.status ?? code ?? error.type ?? undefined,
    retryAfterMs: match ? Math.round(Number(match[1]) * 1000) : undefined
  })
}

/**
 * Parses a provider's error body; a body of no known shape gives `{}`.
 *
 * @since 0.1.0
 */
export const parseErrorBody = (body: string): ProviderDetails =>
  decodeBody(body).pipe(
    Option.map((b): ProviderDetails => {
      if ("error" in b) return typeof b.error === "string" ? compact({ message: b.error }) : ofErrorObject(b.error)
      if ("message" in b) return compact({ message: text(b.message), code: codeText(b.code) ?? b.type ?? undefined })
      const detail = b.detail
      if (typeof detail === "object" && detail !== null && !Array.isArray(detail) && "error" in detail) {
        return compact({ message: text((detail as { readonly error: unknown }).error) })
      }
      return compact({ message: text(detail) })
    }),
    Option.getOrElse((): ProviderDetails => ({}))
  )

/**
 * Headers as plain data, by lower-case name (Effect's `Headers` fits).
 *
 * @since 0.1.0
 */
export type HeaderValues = { readonly [name: string]: string | undefined }

const decimalSeconds = /^\d+\.\d+$/u

const durationMs = (value: string): number | undefined => {
  const trimmed = value.trim()
  if (/^\d+(\.\d+)?$/u.test(trimmed)) return Number(trimmed) * 1000
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/gu)]
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== trimmed) return undefined
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const
  return parts.reduce((total, p) => total + Number(p[1]) * unit[p[2] as keyof typeof unit], 0)
}

/**
 * How long the provider asks to wait, in milliseconds, from `retry-after-ms` or `Retry-After`
 * (an HTTP date is measured against `now`, epoch milliseconds).
 *
 * **Gotchas**
 *
 * `Retry-After` with a fraction of a second (`1.5`) is not HTTP but some providers send it; it is
 * read as seconds.
 *
 * @since 0.1.0
 */
export const retryAfterMs = (headers: HeaderValues, now: number): number | undefined => {
  const ms = headers["retry-after-ms"]?.trim()
  if (ms !== undefined && ms !== "" && Number.isFinite(Number(ms))) return Math.max(0, Number(ms))
  const value = headers["retry-after"]?.trim()
  if (value === undefined || value === "") return undefined
  if (decimalSeconds.test(value)) return Math.round(Number(value) * 1000)
  const parsed = Headers.parseRetryAfter(value)
  return Result.isSuccess(parsed) ? Duration.toMillis(Headers.retryAfterDelay(parsed.success, now)) : undefined
}

const quota = /insufficient[_ ]quota|billing|credit|payment|balance|quota exceeded/iu
const missingModel =
  /model\b[^.;]{0,80}?\b(not found|does not exist|not exist|is not available|not supported|unsupported)|\b(unknown|invalid|unsupported|no such) model\b/iu

/**
 * The facts of a non-2xx answer that decide its reason.
 *
 * @since 0.1.0
 */
interface StatusFacts {
  readonly status: number
  readonly message?: string | undefined
  readonly code?: string | undefined
  readonly retry_after_ms?: number | undefined
}

const textField = (key: "provider_message" | "provider_code", value: string | undefined) =>
  value === undefined || value === "" ? {} : { [key]: value } as Record<typeof key, string>

/**
 * Maps a non-2xx answer to its reason: by status, refined by the provider's code and message.
 *
 * @since 0.1.0
 */
const reasonOfStatus = (facts: StatusFacts): Reason => {
  const { status } = facts
  const message = textField("provider_message", facts.message)
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
    return new InvalidRequest({ upstream_status: status, ...message, ...textField("provider_code", facts.code) })
  }
  if (status >= 500 && status < 600) return new ServerError({ upstream_status: status, ...message })
  return new Unknown({ upstream_status: status, ...message })
}

/**
 * A non-2xx answer, as plain data.
 *
 * @since 0.1.0
 */
export interface UpstreamResponse {
  readonly status: number
  readonly headers: HeaderValues
  readonly body: string
}

/**
 * The error of a non-2xx answer: its body and headers read, its reason decided; `now` (epoch
 * milliseconds) measures an HTTP-date `Retry-After`.
 *
 * @since 0.1.0
 */
export const fromResponse = (response: UpstreamResponse, now: number): UpstreamError => {
  const details = parseErrorBody(response.body)
  const resetRequests = response.status === 429 ? response.headers["x-ratelimit-reset-requests"] : undefined
  const retry = retryAfterMs(response.headers, now) ?? details.retryAfterMs ??
    (resetRequests === undefined ? undefined : durationMs(resetRequests))
  return new UpstreamError({
    reason: reasonOfStatus({ status: response.status, message: details.message, code: details.code, retry_after_ms: retry })
  })
}
