/**
 * Why an upstream attempt failed, as one closed vocabulary of reasons, and how each reason is
 * answered: the HTTP status the caller gets, whether the plan moves on to the next provider,
 * and whether the failure counts against the endpoint's health.
 *
 * **Details**
 *
 * A failure is an {@link UpstreamError} carrying a tagged `reason`; adapters build it directly
 * (`UpstreamAnswer.fromResponse` for a non-2xx answer, the constructors below for everything
 * else), so one vocabulary runs from the wire to the caller's status. Which provider and endpoint
 * failed is known to the caller of the adapter, which passes it to {@link toApiError}.
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
 * | InputTooLong     | 400    | next_provider | no  |
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
import { Schema } from "effect"
import type { ApiError } from "../schema/ApiError.ts"
import { fromStatus } from "../schema/ApiError.ts"
import type { FailureClass } from "./FailureClass.ts"

const Status = Schema.Int
const optionalText = Schema.optionalKey(Schema.String)

/** The provider is rate limiting the gateway. @since 0.1.0 */
export class RateLimited extends Schema.TaggedClass<RateLimited>()("RateLimited", {
  upstream_status: Status,
  retry_after_ms: Schema.optionalKey(Schema.Finite),
  provider_message: optionalText
}) {}
/** The gateway's account with the provider is out of credit or quota. @since 0.1.0 */
export class QuotaExhausted extends Schema.TaggedClass<QuotaExhausted>()("QuotaExhausted", {
  upstream_status: Status,
  provider_message: optionalText
}) {}
/** The provider rejected the gateway's credential or permissions. @since 0.1.0 */
export class AuthFailed extends Schema.TaggedClass<AuthFailed>()("AuthFailed", {
  upstream_status: Status
}) {}
/** The provider refused the request as invalid. @since 0.1.0 */
export class InvalidRequest extends Schema.TaggedClass<InvalidRequest>()("InvalidRequest", {
  upstream_status: Status,
  provider_message: optionalText,
  provider_code: optionalText
}) {}
/** The input exceeds the provider's size limit. @since 0.1.0 */
export class InputTooLarge extends Schema.TaggedClass<InputTooLarge>()("InputTooLarge", {
  upstream_status: Status,
  provider_message: optionalText
}) {}
/**
 * An input has more tokens than the model takes, with `truncate: "none"`: counted by the gateway
 * before any call (`index` and `tokens` known), or refused by the provider, told not to cut.
 * @since 0.12.0
 */
class InputTooLong extends Schema.TaggedClass<InputTooLong>()("InputTooLong", {
  model: Schema.String,
  max_input_tokens: Schema.optionalKey(Schema.Int),
  index: Schema.optionalKey(Schema.Int),
  tokens: Schema.optionalKey(Schema.Int),
  upstream_status: Schema.optionalKey(Status),
  provider_message: optionalText
}) {}
/** The provider does not know the upstream model the catalog names. @since 0.1.0 */
export class ModelNotFound extends Schema.TaggedClass<ModelNotFound>()("ModelNotFound", {
  upstream_status: Status,
  provider_message: optionalText
}) {}
/** The adapter cannot express this input for the provider; nothing was sent. @since 0.1.0 */
class UnsupportedInput extends Schema.TaggedClass<UnsupportedInput>()("UnsupportedInput", {
  detail: Schema.String
}) {}
/** No complete answer within the time limit (or the provider reported a timeout). @since 0.1.0 */
export class Timeout extends Schema.TaggedClass<Timeout>()("Timeout", {
  timeout_ms: Schema.optionalKey(Schema.Finite),
  upstream_status: Schema.optionalKey(Status)
}) {}
/** The provider says it is overloaded (529). @since 0.1.0 */
export class Overloaded extends Schema.TaggedClass<Overloaded>()("Overloaded", {
  upstream_status: Status,
  retry_after_ms: Schema.optionalKey(Schema.Finite)
}) {}
/** The provider says it is temporarily unavailable (503). @since 0.1.0 */
export class Unavailable extends Schema.TaggedClass<Unavailable>()("Unavailable", {
  upstream_status: Status,
  retry_after_ms: Schema.optionalKey(Schema.Finite)
}) {}
/** The provider failed with a server error. @since 0.1.0 */
export class ServerError extends Schema.TaggedClass<ServerError>()("ServerError", {
  upstream_status: Status,
  provider_message: optionalText
}) {}
/** No connection could be made; the provider never saw the request. @since 0.1.0 */
class Unreachable extends Schema.TaggedClass<Unreachable>()("Unreachable", {
  detail: Schema.String
}) {}
/** The connection broke after the request was sent. @since 0.1.0 */
class ConnectionLost extends Schema.TaggedClass<ConnectionLost>()("ConnectionLost", {
  detail: Schema.String
}) {}
/** A 2xx answer that breaks the provider's contract (bad JSON, wrong count or width of vectors). @since 0.1.0 */
class InvalidResponse extends Schema.TaggedClass<InvalidResponse>()("InvalidResponse", {
  detail: Schema.String
}) {}
/** A status the gateway has no rule for. @since 0.1.0 */
export class Unknown extends Schema.TaggedClass<Unknown>()("Unknown", {
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
  InputTooLong,
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
  InputTooLong: { status: 400, failureClass: "next_provider", countsAgainstEndpoint: false },
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
 * Which endpoint an attempt was made at.
 *
 * @since 0.1.0
 */
export interface AttemptContext {
  readonly provider: string
  readonly endpoint: string
}

/**
 * The caller-facing sentence of a reason, naming the provider.
 *
 * @since 0.1.0
 */
export const describe = (reason: Reason, provider: string): string => {
  const p = JSON.stringify(provider)
  const r = reason
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
    case "InputTooLong":
      return tooLongMessage(r)
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

const count = (n: number) => n.toLocaleString("en-US")

/**
 * The one sentence of a long input refused, whoever counted it: `input[3]: 9,120 tokens;
 * openai/text-embedding-3-small takes at most 8,191 (truncate: "end" cuts it, "chunk" embeds it
 * in pieces)`; the index and the count are left out where the provider's refusal does not say
 * them.
 */
const tooLongMessage = (r: InputTooLong): string => {
  const where = r.index === undefined ? "input" : `input[${r.index}]`
  const limit = r.max_input_tokens === undefined ? "" : ` (at most ${count(r.max_input_tokens)})`
  const said = r.tokens === undefined
    ? `${where}: more tokens than ${r.model} takes${limit}`
    : `${where}: ${count(r.tokens)} tokens; ${r.model} takes${r.max_input_tokens === undefined ? " fewer" : ` at most ${count(r.max_input_tokens)}`}`
  return `${said} (truncate: "end" cuts it, "chunk" embeds it in pieces)`
}

/**
 * One failed upstream attempt: what every adapter fails with, and what the fallback runner
 * reads to decide whether to try the next endpoint.
 *
 * **When to use**
 *
 * Use {@link UpstreamError.failureClass} to decide whether to try the next endpoint,
 * {@link UpstreamError.countsAgainstEndpoint} to decide whether to record a failure in the
 * endpoint's health, and {@link toApiError} to answer the caller when no attempt succeeded.
 * Match on the reason with `Effect.catchReason("UpstreamError", "RateLimited", ...)`.
 *
 * **Gotchas**
 *
 * No field ever carries the API key; an adapter scrubs the connection's own credentials out of
 * provider messages before the error leaves the attempt.
 *
 * @since 0.1.0
 */
export class UpstreamError extends Schema.TaggedError<UpstreamError>()("UpstreamError", {
  reason: Reason,
  /** The slug of the provider that failed, once the attempt that met the failure names it. */
  provider: Schema.optionalKey(Schema.String)
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
    return describe(this.reason, this.provider ?? "upstream")
  }
}

/**
 * The error as the attempt at `provider` met it: its message names the provider (an attempt's
 * span and log read it).
 *
 * @since 0.5.0
 */
export const atProvider = (provider: string) => (error: UpstreamError): UpstreamError =>
  error.provider === provider ? error : new UpstreamError({ reason: error.reason, provider })

/** The error of one reason. @since 0.1.0 */
export const of = (reason: Reason): UpstreamError => new UpstreamError({ reason })

/** No answer within `timeoutMs`. @since 0.1.0 */
export const timeout = (timeoutMs: number) => of(new Timeout({ timeout_ms: timeoutMs }))

/** No connection could be made. @since 0.1.0 */
export const unreachable = (detail: string) => of(new Unreachable({ detail }))

/** The connection broke after the request was sent. @since 0.1.0 */
export const connectionLost = (detail: string) => of(new ConnectionLost({ detail }))

/** A 2xx answer that breaks the provider's contract. @since 0.1.0 */
export const invalidResponse = (detail: string) => of(new InvalidResponse({ detail }))

/** Vectors of another width than asked for: an invalid response. @since 0.1.0 */
export const widthMismatch = (expected: number, got: number) =>
  invalidResponse(`expected vectors of ${expected} dimensions, got ${got}`)

/**
 * An input the gateway counted over the model's limit, refused before any call. @since 0.12.0
 */
export const inputTooLong = (fields: { readonly model: string; readonly max_input_tokens: number; readonly index: number; readonly tokens: number }) =>
  of(new InputTooLong(fields))

const longInput =
  /context[ _-]?length|too many (input )?tokens|maximum (input|context)[ _-]?length|token count|tokens? limit|must have less than \d+ tokens|exceeds? (the )?(max(imum)?|limit)[^.]{0,40}tokens|input (text )?(is )?too long|too long/iu
const indexIn = /(?:input\[|index |at index |texts\[|inputs\[)(\d+)/iu
const tokensIn = /(?:requested|received|given:?|token count(?: is)?:?|input token count:?|has)\s*(\d[\d,]*)\s*(?:tokens)?/iu

const wholeNumber = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const n = Number(text.replace(/,/gu, ""))
  return Number.isSafeInteger(n) ? n : undefined
}

/**
 * A provider's refusal of a long input (told not to cut) as the gateway's own: an
 * `InvalidRequest`, `InputTooLarge` or `Unknown` whose message says the input has too many
 * tokens becomes `InputTooLong`, with the input's index and token count where the message gives
 * them. Any other failure is returned as it is.
 *
 * @since 0.12.0
 */
export const asInputTooLong = (
  error: UpstreamError,
  context: { readonly model: string; readonly maxInputTokens: number | undefined; readonly count: number }
): UpstreamError => {
  const r = error.reason
  if (r._tag !== "InvalidRequest" && r._tag !== "InputTooLarge" && r._tag !== "Unknown") return error
  const text = r.provider_message ?? ""
  if (!longInput.test(text)) return error
  const index = wholeNumber(indexIn.exec(text)?.[1]) ?? (context.count === 1 ? 0 : undefined)
  const tokens = wholeNumber(tokensIn.exec(text)?.[1])
  return new UpstreamError({
    reason: new InputTooLong({
      model: context.model,
      ...(context.maxInputTokens !== undefined ? { max_input_tokens: context.maxInputTokens } : {}),
      ...(index !== undefined && index < context.count ? { index } : {}),
      ...(tokens !== undefined && (context.maxInputTokens === undefined || tokens > context.maxInputTokens) ? { tokens } : {}),
      upstream_status: r.upstream_status,
      ...(r.provider_message !== undefined ? { provider_message: r.provider_message } : {})
    }),
    ...(error.provider !== undefined ? { provider: error.provider } : {})
  })
}

/** The adapter cannot express this input for its provider; nothing was sent. @since 0.1.0 */
export const unsupportedInput = (detail: string) => of(new UnsupportedInput({ detail }))

/**
 * The caller-facing error of a failure: the status of its reason, its message, and metadata
 * `{ provider_name, endpoint, reason, upstream_status?, retry_after_ms?, raw? }` (`raw` is the
 * redacted provider message, never present for `AuthFailed`).
 *
 * @since 0.1.0
 */
export const toApiError = (failure: UpstreamError, context: AttemptContext): ApiError => {
  const r = failure.reason as Reason & {
    readonly upstream_status?: number
    readonly retry_after_ms?: number
    readonly provider_message?: string
  }
  const metadata: Record<string, unknown> = {
    provider_name: context.provider,
    endpoint: context.endpoint,
    reason: r._tag
  }
  if (r.upstream_status !== undefined) metadata.upstream_status = r.upstream_status
  if (r.retry_after_ms !== undefined) metadata.retry_after_ms = r.retry_after_ms
  if (r._tag === "InputTooLong") {
    metadata.field = "input"
    metadata.model = r.model
    if (r.index !== undefined) metadata.index = r.index
    if (r.tokens !== undefined) metadata.tokens = r.tokens
    if (r.max_input_tokens !== undefined) metadata.max_input_tokens = r.max_input_tokens
  }
  if (r._tag !== "AuthFailed" && r.provider_message !== undefined) metadata.raw = redact(r.provider_message)
  return fromStatus(failure.status, describe(r, context.provider), metadata)
}

