/**
 * Errors of the embeddings and key endpoints, on the wire as the integer-code envelope.
 *
 * **Details**
 *
 * Every error here is one HTTP status of the wire (`BadRequest`, `NotFound`...). The domain names
 * its failures for the facts they report (`ModelNotFound`, `NoEligibleProvider`, `UpstreamFailed`,
 * see `EmbeddingsError`) and maps them to these at the edge. On the wire each one is the spec's envelope
 * `{ "error": { "code": <status>, "message": ..., "metadata": ... }, "user_id": ... }`: the
 * schema returned by {@link envelope} decodes that envelope into the class and encodes the class
 * back into it, so the server, the generated client and the OpenAPI document agree.
 *
 * **Gotchas**
 *
 * Two classes may share a status (a bad request and an unsupported input are both 400); the
 * envelope keeps the status only, so a client decodes every 400 into the first class listed for
 * that status on the endpoint.
 *
 * @since 0.1.0
 */
import { Schema, SchemaTransformation } from "effect"
import { HttpApiSchema } from "effect/http-api"

/**
 * Free-form details attached to an error (which field broke which rule, why each provider was
 * excluded...).
 *
 * @since 0.1.0
 */
const Metadata = Schema.Record(Schema.String, Schema.Unknown)

/**
 * The integer-code error envelope of the embeddings and key endpoints.
 *
 * @since 0.1.0
 */
export const ErrorEnvelope = Schema.Struct({
  error: Schema.Struct({
    code: Schema.Int,
    message: Schema.String,
    metadata: Schema.optionalKey(Schema.NullOr(Metadata))
  }),
  service_metadata: Schema.optionalKey(Schema.NullOr(Metadata)),
  user_id: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/**
 * The encoded form of {@link ErrorEnvelope}.
 *
 * @since 0.1.0
 */
export type ErrorEnvelope = typeof ErrorEnvelope.Type

const fields = {
  message: Schema.String,
  metadata: Schema.optionalKey(Metadata)
}

/**
 * Builds the wire schema of an error class: the envelope with `code` equal to `status`.
 *
 * @since 0.1.0
 */
const envelope = <S extends Schema.Codec<unknown, EncodedError, never, never> & { readonly identifier: string }>(self: S, status: number) =>
  ErrorEnvelope.pipe(
    Schema.decodeTo(
      self,
      SchemaTransformation.transform<EncodedError, ErrorEnvelope>({
        decode: (e) => ({
          _tag: self.identifier,
          message: e.error.message,
          ...(e.error.metadata ? { metadata: e.error.metadata } : {})
        }),
        encode: (e) => ({
          error: {
            code: status,
            message: e.message,
            ...(e.metadata !== undefined ? { metadata: e.metadata } : {})
          }
        })
      })
    ),
    HttpApiSchema.status(status)
  )

interface EncodedError {
  readonly _tag: string
  readonly message: string
  readonly metadata?: { readonly [k: string]: unknown }
}

/** 400: invalid request parameters or malformed input. @since 0.1.0 */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", fields, { httpApiStatus: 400 }) {}
/** 401: a missing, malformed, unknown, disabled or expired credential. @since 0.1.0 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fields, { httpApiStatus: 401 }) {}
/** 402: the workspace's credits or the key's limit cannot pay for the request. @since 0.1.0 */
export class PaymentRequired extends Schema.TaggedError<PaymentRequired>()("PaymentRequired", fields, { httpApiStatus: 402 }) {}
/** 403: authenticated, but the key lacks the permission (a management key is required). @since 0.1.0 */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields, { httpApiStatus: 403 }) {}
/** 404: the resource (a model, a key, an allowed provider) does not exist. @since 0.1.0 */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields, { httpApiStatus: 404 }) {}
/** 409: the resource is in a state that refuses the change (a provider of the config file). @since 0.1.0 */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fields, { httpApiStatus: 409 }) {}
/** 408: the gateway's own time limit for the request ran out. @since 0.1.0 */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", fields, { httpApiStatus: 408 }) {}
/** 413: the request body exceeds the configured limit. @since 0.1.0 */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields, { httpApiStatus: 413 }) {}
/** 429: the key's request rate limit is exhausted. @since 0.1.0 */
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", fields, { httpApiStatus: 429 }) {}
/** 500: an unexpected failure inside the gateway. @since 0.1.0 */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields, { httpApiStatus: 500 }) {}
/** 502: the upstream provider failed or answered something unusable. @since 0.1.0 */
export class BadGateway extends Schema.TaggedError<BadGateway>()("BadGateway", fields, { httpApiStatus: 502 }) {}
/** 503: no provider can serve the request right now. @since 0.1.0 */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", fields, { httpApiStatus: 503 }) {}
/** 524: the upstream provider did not answer within its time limit. @since 0.1.0 */
export class UpstreamTimeout extends Schema.TaggedError<UpstreamTimeout>()("UpstreamTimeout", fields, { httpApiStatus: 524 }) {}
/** 529: the upstream provider is overloaded. @since 0.1.0 */
export class UpstreamOverloaded extends Schema.TaggedError<UpstreamOverloaded>()("UpstreamOverloaded", fields, { httpApiStatus: 529 }) {}

/**
 * Every integer-code error, as a tagged union.
 *
 * @since 0.1.0
 */
export type ApiError =
  | BadRequest
  | Unauthorized
  | PaymentRequired
  | Forbidden
  | NotFound
  | RequestTimeout
  | PayloadTooLarge
  | TooManyRequests
  | InternalError
  | BadGateway
  | ServiceUnavailable
  | UpstreamTimeout
  | UpstreamOverloaded

/**
 * The wire schemas of every integer-code error, keyed by status.
 *
 * @since 0.1.0
 */
export const wire = {
  400: envelope(BadRequest, 400),
  401: envelope(Unauthorized, 401),
  402: envelope(PaymentRequired, 402),
  403: envelope(Forbidden, 403),
  404: envelope(NotFound, 404),
  408: envelope(RequestTimeout, 408),
  413: envelope(PayloadTooLarge, 413),
  429: envelope(TooManyRequests, 429),
  500: envelope(InternalError, 500),
  502: envelope(BadGateway, 502),
  503: envelope(ServiceUnavailable, 503),
  524: envelope(UpstreamTimeout, 524),
  529: envelope(UpstreamOverloaded, 529)
} as const

/**
 * The wire schema of {@link Conflict} (409), kept out of {@link wire}: only the management of
 * runtime providers answers it.
 *
 * @since 0.1.0
 */
export const conflictWire = envelope(Conflict, 409)

/**
 * Builds the error of a status from a message, for code that only knows the status
 * (a router-level response, a mapped upstream failure).
 *
 * @since 0.1.0
 */
export const fromStatus = (status: keyof typeof wire, message: string, metadata?: { readonly [k: string]: unknown }): ApiError => {
  const props = metadata === undefined ? { message } : { message, metadata }
  switch (status) {
    case 400: return new BadRequest(props)
    case 401: return new Unauthorized(props)
    case 402: return new PaymentRequired(props)
    case 403: return new Forbidden(props)
    case 404: return new NotFound(props)
    case 408: return new RequestTimeout(props)
    case 413: return new PayloadTooLarge(props)
    case 429: return new TooManyRequests(props)
    case 500: return new InternalError(props)
    case 502: return new BadGateway(props)
    case 503: return new ServiceUnavailable(props)
    case 524: return new UpstreamTimeout(props)
    case 529: return new UpstreamOverloaded(props)
  }
}

/**
 * The HTTP status of an error, as the gateway answers it: the status {@link wire} keys it under
 * (a batch's error line carries it as its `code`).
 *
 * @since 0.9.0
 */
export const statusOf = (error: ApiError): keyof typeof wire => statuses[error._tag]

const statuses = Object.fromEntries(
  (Object.keys(wire).map(Number) as Array<keyof typeof wire>).map((status) => [fromStatus(status, "")._tag, status])
) as Record<ApiError["_tag"], keyof typeof wire>

/**
 * The errors of a model call (`POST /embeddings`, `POST /rerank`, Cohere's `POST /v2/rerank`):
 * bad input, money, access, an unknown model, time limits, size, rate limits, and the upstream
 * failures `UpstreamError.toApiError` maps.
 *
 * @since 0.4.0
 */
export const modelCallErrors = [
  wire[400],
  wire[402],
  wire[403],
  wire[404],
  wire[408],
  wire[413],
  wire[429],
  wire[500],
  wire[502],
  wire[503],
  wire[524],
  wire[529]
] as const
