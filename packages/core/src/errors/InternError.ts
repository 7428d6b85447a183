/**
 * Errors of the intern operations, on the wire as the string-code envelope
 * `{ "error": { "code": "not_found", "message": ..., "metadata"?: { "reason", "retryable" } } }`.
 *
 * **Details**
 *
 * Every error here is one fact (`InternNotFound`, `InternBusy`...) with the HTTP status it is
 * answered with and the `code` the spec gives it. The spec leaves the status lines open except
 * for `payload_too_large` (413); they are chosen from the statuses the public SDK types for these
 * operations (400, 401, 403, 404, 408, 409, 413, 415, 500, 502):
 *
 * | code | status |
 * |---|---|
 * | `invalid_body` | 400 |
 * | `invalid_request` | 400 (a bad query or path parameter) |
 * | `403` | 403 (regional hostname, foreign workspace) |
 * | `not_found` | 404 |
 * | `408` | 408 |
 * | `intern_busy` | 409 |
 * | `name_taken` | 409 |
 * | `payload_too_large` | 413 |
 * | `unsupported_media_type` | 415 |
 * | `internal_error` | 500 |
 * | `upstream_unavailable` | 502 |
 * | `503` | 503 (the gateway's store did not answer; `metadata.reason: "store_unavailable"`) |
 *
 * `401` comes from the shared bearer middleware in the integer-code envelope, which the spec's
 * table also lists as an integer code.
 *
 * `metadata`, when present, is `{ reason, retryable }`, the shape the public SDK decodes:
 * `upstream_unavailable` always carries `retryable: true`, `intern_busy` carries the current
 * status as `reason` and whether waiting may help.
 *
 * **Gotchas**
 *
 * The two 403 facts share the integer code 403; the wire keeps them apart by `metadata.reason`.
 *
 * @since 0.1.0
 */
import { Schema, SchemaTransformation } from "effect"
import { HttpApiSchema } from "effect/http-api"
import type { StoreUnavailable } from "../store/StoreUnavailable.ts"

/**
 * The hint an error may carry: a machine-readable reason and whether the same request may
 * succeed later.
 *
 * @since 0.1.0
 */
const ErrorHint = Schema.Struct({
  reason: Schema.String,
  retryable: Schema.Boolean
})

/**
 * @since 0.1.0
 */
type ErrorHint = typeof ErrorHint.Type

/**
 * The envelope of every intern error: `code` is a string identifier or an integer.
 *
 * @since 0.1.0
 */
export const InternErrorEnvelope = Schema.Struct({
  error: Schema.Struct({
    code: Schema.Union([Schema.String, Schema.Int]),
    message: Schema.String,
    metadata: Schema.optionalKey(ErrorHint)
  })
})

/**
 * @since 0.1.0
 */
export type InternErrorEnvelope = typeof InternErrorEnvelope.Type

const fields = {
  message: Schema.String,
  metadata: Schema.optionalKey(ErrorHint)
}

interface EncodedError {
  readonly _tag: string
  readonly message: string
  readonly metadata?: ErrorHint
}

/**
 * Builds the wire schema of an error class: the envelope with a fixed `code` (and, when given, a
 * fixed `metadata.reason`), answered with `status`.
 *
 * @since 0.1.0
 */
const envelope = <S extends Schema.Codec<unknown, EncodedError, never, never> & { readonly identifier: string }>(
  self: S,
  options: { readonly code: string | number; readonly status: number; readonly reason?: string }
) => {
  const wireShape = Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(options.code),
      message: Schema.String,
      metadata: Schema.optionalKey(ErrorHint)
    })
  })
  const reason = options.reason
  const from = reason === undefined
    ? wireShape
    : wireShape.check(Schema.makeFilter((e) => e.error.metadata?.reason === reason || `metadata.reason must be ${reason}`))
  return from.pipe(
    Schema.decodeTo(
      self,
      SchemaTransformation.transform<EncodedError, WireError>({
        decode: (e) => ({
          _tag: self.identifier,
          message: e.error.message,
          ...(e.error.metadata !== undefined ? { metadata: e.error.metadata } : {})
        }),
        encode: (e) => ({
          error: {
            code: options.code,
            message: e.message,
            ...(reason !== undefined
              ? { metadata: { reason, retryable: e.metadata?.retryable ?? false } }
              : e.metadata !== undefined
              ? { metadata: e.metadata }
              : {})
          }
        })
      })
    ),
    HttpApiSchema.status(options.status)
  )
}

interface WireError {
  readonly error: { readonly code: string | number; readonly message: string; readonly metadata?: ErrorHint }
}

/** `invalid_body` (400): the request body is not JSON or breaks a rule of its schema. @since 0.1.0 */
export class InvalidBody extends Schema.TaggedError<InvalidBody>()("InvalidBody", fields, { httpApiStatus: 400 }) {}
/** `invalid_request` (400): a query or path parameter breaks a rule of its schema. @since 0.1.0 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", fields, { httpApiStatus: 400 }) {}
/** `403` (403): intern operations are refused on a regional hostname. @since 0.1.0 */
export class RegionalHostRefused extends Schema.TaggedError<RegionalHostRefused>()("RegionalHostRefused", fields, { httpApiStatus: 403 }) {}
/** `403` (403): the request names a workspace the key does not select. @since 0.1.0 */
export class ForeignWorkspace extends Schema.TaggedError<ForeignWorkspace>()("ForeignWorkspace", fields, { httpApiStatus: 403 }) {}
/** `not_found` (404): no intern with this id is visible to the key. @since 0.1.0 */
export class InternNotFound extends Schema.TaggedError<InternNotFound>()("InternNotFound", fields, { httpApiStatus: 404 }) {}
/** `408` (408): the request did not complete within the gateway's time limit. @since 0.1.0 */
export class InternRequestTimeout extends Schema.TaggedError<InternRequestTimeout>()("InternRequestTimeout", fields, { httpApiStatus: 408 }) {}
/** `intern_busy` (409): the intern's status does not allow the operation. @since 0.1.0 */
export class InternBusy extends Schema.TaggedError<InternBusy>()("InternBusy", fields, { httpApiStatus: 409 }) {}
/** `name_taken` (409): the creator already has an intern of that name in the workspace. @since 0.1.0 */
export class NameTaken extends Schema.TaggedError<NameTaken>()("NameTaken", fields, { httpApiStatus: 409 }) {}
/** `payload_too_large` (413): the body exceeds 1048576 bytes. @since 0.1.0 */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields, { httpApiStatus: 413 }) {}
/** `unsupported_media_type` (415): the body is not sent as `application/json`. @since 0.1.0 */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", fields, { httpApiStatus: 415 }) {}
/** `internal_error` (500): the request could not be completed. @since 0.1.0 */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields, { httpApiStatus: 500 }) {}
/** `upstream_unavailable` (502): the intern runtime could not be reached; the request may be retried. @since 0.1.0 */
export class UpstreamUnavailable extends Schema.TaggedError<UpstreamUnavailable>()("UpstreamUnavailable", fields, { httpApiStatus: 502 }) {}

/** `503` (503): the gateway's store did not answer; the request may be retried. @since 0.3.0 */
export class InternServiceUnavailable extends Schema.TaggedError<InternServiceUnavailable>()("InternServiceUnavailable", fields, { httpApiStatus: 503 }) {}

/**
 * The intern error of a store failure: 503, worth retrying shortly.
 *
 * @since 0.3.0
 */
export const storeToInternError = (_: StoreUnavailable): InternServiceUnavailable =>
  new InternServiceUnavailable({
    message: "The gateway's store is unavailable; try again shortly",
    metadata: { reason: "store_unavailable", retryable: true }
  })

/**
 * Every intern error, as a tagged union.
 *
 * @since 0.1.0
 */
export type InternError =
  | InvalidBody
  | InvalidRequest
  | RegionalHostRefused
  | ForeignWorkspace
  | InternNotFound
  | InternRequestTimeout
  | InternBusy
  | NameTaken
  | PayloadTooLarge
  | UnsupportedMediaType
  | InternalError
  | UpstreamUnavailable
  | InternServiceUnavailable

/**
 * The `code` and status of every intern error, by tag.
 *
 * @since 0.1.0
 */
export const codes = {
  InvalidBody: { code: "invalid_body", status: 400 },
  InvalidRequest: { code: "invalid_request", status: 400 },
  RegionalHostRefused: { code: 403, status: 403, reason: "regional_host" },
  ForeignWorkspace: { code: 403, status: 403, reason: "foreign_workspace" },
  InternNotFound: { code: "not_found", status: 404 },
  InternRequestTimeout: { code: 408, status: 408 },
  InternBusy: { code: "intern_busy", status: 409 },
  NameTaken: { code: "name_taken", status: 409 },
  PayloadTooLarge: { code: "payload_too_large", status: 413 },
  UnsupportedMediaType: { code: "unsupported_media_type", status: 415 },
  InternalError: { code: "internal_error", status: 500 },
  UpstreamUnavailable: { code: "upstream_unavailable", status: 502 },
  InternServiceUnavailable: { code: 503, status: 503, reason: "store_unavailable" }
} as const satisfies Record<InternError["_tag"], { readonly code: string | number; readonly status: number; readonly reason?: string }>

/**
 * The wire schemas of every intern error, by tag. Declare these (not the classes) as endpoint
 * errors so the body is the spec's envelope.
 *
 * @since 0.1.0
 */
export const wire = {
  InvalidBody: envelope(InvalidBody, codes.InvalidBody),
  InvalidRequest: envelope(InvalidRequest, codes.InvalidRequest),
  RegionalHostRefused: envelope(RegionalHostRefused, codes.RegionalHostRefused),
  ForeignWorkspace: envelope(ForeignWorkspace, codes.ForeignWorkspace),
  InternNotFound: envelope(InternNotFound, codes.InternNotFound),
  InternRequestTimeout: envelope(InternRequestTimeout, codes.InternRequestTimeout),
  InternBusy: envelope(InternBusy, codes.InternBusy),
  NameTaken: envelope(NameTaken, codes.NameTaken),
  PayloadTooLarge: envelope(PayloadTooLarge, codes.PayloadTooLarge),
  UnsupportedMediaType: envelope(UnsupportedMediaType, codes.UnsupportedMediaType),
  InternalError: envelope(InternalError, codes.InternalError),
  UpstreamUnavailable: envelope(UpstreamUnavailable, codes.UpstreamUnavailable),
  InternServiceUnavailable: envelope(InternServiceUnavailable, codes.InternServiceUnavailable)
} as const

/**
 * The envelope of an intern error as plain JSON, for code that answers outside the typed endpoint
 * (a router-level response).
 *
 * @since 0.1.0
 */
export const toEnvelope = (error: InternError): InternErrorEnvelope => ({
  error: {
    code: codes[error._tag].code,
    message: error.message,
    ...(error.metadata !== undefined
      ? { metadata: error.metadata }
      : "reason" in codes[error._tag]
      ? { metadata: { reason: (codes[error._tag] as { readonly reason: string }).reason, retryable: false } }
      : {})
  }
})
