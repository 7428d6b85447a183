/**
 * Amazon Bedrock's refusals read as the gateway's upstream reasons.
 *
 * **Details**
 *
 * Bedrock names its error in the `x-amzn-ErrorType` header (`ThrottlingException:http://...`)
 * and says why in the body's `message`. Its HTTP statuses do not always say what the error
 * means to a gateway: `ModelNotReadyException` comes as 429 though the model is loading
 * (unavailable, try the next provider), `ServiceQuotaExceededException` as 400 though it is the
 * account's token quota (rate limited, not a bad request). The type decides the status the
 * reason is taken from; an unknown type keeps the answer's own status.
 *
 * @since 0.9.0
 */
import * as UpstreamAnswer from "./UpstreamAnswer.ts"
import type { UpstreamError } from "./UpstreamError.ts"

/**
 * The status each Bedrock error type is read as.
 *
 * @since 0.9.0
 */
const statusOfErrorType: Readonly<Record<string, number>> = {
  ThrottlingException: 429,
  ServiceQuotaExceededException: 429,
  ModelNotReadyException: 503,
  ServiceUnavailableException: 503,
  ValidationException: 400,
  AccessDeniedException: 403,
  UnrecognizedClientException: 401,
  InvalidSignatureException: 403,
  IncompleteSignatureException: 403,
  MissingAuthenticationTokenException: 403,
  ExpiredTokenException: 403,
  ResourceNotFoundException: 404,
  ModelTimeoutException: 408,
  ModelErrorException: 502,
  InternalServerException: 500
}

const unknownModel = /model identifier is invalid/iu

/**
 * The error type of an answer: `x-amzn-errortype` up to its first `:`, else the body's `__type`.
 *
 * @since 0.9.0
 */
export const errorTypeOf = (headers: UpstreamAnswer.HeaderValues, body: string): string | undefined => {
  const header = headers["x-amzn-errortype"]
  if (header !== undefined && header.trim() !== "") return header.split(":")[0]!.trim()
  const match = /"__type"\s*:\s*"(?:[^"#]*#)?([A-Za-z]+)"/u.exec(body)
  return match?.[1]
}

/**
 * The error of a non-2xx Bedrock answer, its reason decided by the error type.
 *
 * @since 0.9.0
 */
export const fromResponse = (response: UpstreamAnswer.UpstreamResponse, now: number): UpstreamError => {
  const type = errorTypeOf(response.headers, response.body)
  const message = UpstreamAnswer.parseErrorBody(response.body).message
  // An unknown model id comes back as a ValidationException; it is a missing model.
  const status = type === "ValidationException" && unknownModel.test(message ?? "")
    ? 404
    : (type === undefined ? undefined : statusOfErrorType[type]) ?? response.status
  // The body Bedrock sends is `{ "message" }`; the type travels as the provider's code.
  const body = JSON.stringify({ message: message ?? type ?? "", ...(type === undefined ? {} : { code: type }) })
  return UpstreamAnswer.fromResponse({ status, headers: response.headers, body }, now)
}
