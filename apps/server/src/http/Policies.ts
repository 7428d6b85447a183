import { codes } from "@switchyard/core/errors/InternError"
import { Effect } from "effect"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

/**
 * What applies before and after every route, whoever calls: a URL with an encoded NUL is a 400,
 * a path the router would read as another (one with `;` or `#`, where it cuts the path) is a 404,
 * and the responses the HTTP layer produces without a body (unknown route, unsupported content
 * type...) get the spec's error envelope. What concerns a request's body (its limit, its memory,
 * its nesting, its time) waits until its key is known (RequestBody.ts).
 */

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

/** The message of the envelope a bodiless error answer gets (an unmatched route's 404...). */
export const messageFor = (status: number) => messages[status] ?? `HTTP ${status}`

/** The error envelope of `path`'s route: the interns' string codes, the spec's status elsewhere. */
export const envelopeBody = (path: string, status: number, message: string, metadata?: Record<string, unknown>) =>
  internPath.test(path)
    ? { error: { code: internCodes[status] ?? (status >= 500 ? "internal_error" : status), message } }
    : { error: { code: status, message, ...(metadata === undefined ? {} : { metadata }) } }

export const envelopeFor = (path: string, status: number, message: string) =>
  HttpServerResponse.jsonUnsafe(envelopeBody(path, status, message), { status })

const isJson = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag !== "Empty" && (response.body.contentType ?? "").startsWith("application/json")

// A refused single sign-on is a page for a person, saying why (SignInRoutes.ts), not an envelope.
const isSignInPage = (url: string, response: HttpServerResponse.HttpServerResponse) =>
  url.startsWith("/ui/auth/") && response.body._tag !== "Empty" && (response.body.contentType ?? "").startsWith("text/html")

// The router ends a path at `;` (and `#`) as it does at `?`: `/api/v1/models/;/x` would be served
// as `/api/v1/models`. No route of the gateway has either in its path.
const cutByRouter = (url: string) => {
  const query = url.indexOf("?")
  const path = query === -1 ? url : url.slice(0, query)
  return path.includes(";") || path.includes("#")
}

export const layer = HttpRouter.middleware((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (/%00/u.test(request.url)) {
      const code = internPath.test(request.url) ? codes.InvalidRequest.code : 400
      return HttpServerResponse.jsonUnsafe(
        { error: { code, message: "Invalid request: the URL contains an encoded NUL character (%00)" } },
        { status: 400 }
      )
    }
    if (cutByRouter(request.url)) return envelopeFor(request.url, 404, "Not found: a path of this API has no `;` or `#`")
    yield* HttpEffect.appendPreResponseHandler((req, response) =>
      Effect.succeed(
        response.status >= 400 && !isJson(response) && !isSignInPage(req.url, response)
          ? envelopeFor(req.url, response.status, messageFor(response.status))
          : response
      )
    )
    return yield* app
  }), { global: true })
