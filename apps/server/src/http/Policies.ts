import { codes } from "@switchyard/core/errors/InternError"
import { limits } from "@switchyard/core/schema/Intern"
import { Effect } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpEffect, HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

/**
 * Body limits and envelopes that apply before and after every route: the spec's 1 MiB limit for
 * intern updates, a configurable limit elsewhere, and the spec's error envelope for the
 * responses the HTTP layer produces without a body (unknown route, body over the limit, unsupported
 * content type...).
 */
export interface PolicyOptions {
  readonly maxBodyBytes: number
}

export const internBodyLimit = limits.body

const internPath = /^\/api\/v1\/interns(\/|$|\?)/u

const internCodes: Record<number, string | number> = {
  400: codes.InvalidBody.code,
  401: 401,
  403: 403,
  404: codes.InternNotFound.code,
  405: codes.InternNotFound.code,
  408: codes.InternRequestTimeout.code,
  413: codes.PayloadTooLarge.code,
  415: codes.UnsupportedMediaType.code,
  500: codes.InternalError.code,
  502: codes.UpstreamUnavailable.code,
  503: codes.UpstreamUnavailable.code
}

const messages: Record<number, string> = {
  400: "Invalid request",
  404: "Not found",
  405: "Method not allowed",
  408: "The request timed out",
  413: "Request body too large",
  415: "Unsupported content type: send application/json",
  500: "Internal server error"
}

export const envelopeFor = (path: string, status: number, message: string) =>
  HttpServerResponse.jsonUnsafe(
    internPath.test(path)
      ? { error: { code: internCodes[status] ?? (status >= 500 ? "internal_error" : status), message } }
      : { error: { code: status, message } },
    { status }
  )

const isJson = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag !== "Empty" && (response.body.contentType ?? "").startsWith("application/json")

export const layer = (options: PolicyOptions) =>
  HttpRouter.middleware((app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const limit = internPath.test(request.url) ? internBodyLimit : options.maxBodyBytes
      const declared = request.headers["content-length"]
      if (declared !== undefined && Number(declared) > limit) {
        return envelopeFor(request.url, 413, `Request body exceeds ${limit} bytes`).pipe(
          HttpServerResponse.setHeader("connection", "close")
        )
      }
      yield* HttpEffect.appendPreResponseHandler((req, response) =>
        Effect.succeed(
          response.status >= 400 && !isJson(response)
            ? envelopeFor(req.url, response.status, messages[response.status] ?? `HTTP ${response.status}`)
            : response
        )
      )
      return yield* Effect.provideService(app, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit))
    }), { global: true })
