import { Api } from "@switchyard/core/api/Api"
import { Caller } from "@switchyard/core/api/Authorization"
import { InternPolicy, RegionalHosts } from "@switchyard/core/api/InternsApi"
import {
  InternalError,
  InternRequestTimeout,
  InvalidBody,
  InvalidRequest,
  PayloadTooLarge,
  RegionalHostRefused,
  storeToInternError,
  UnsupportedMediaType
} from "@switchyard/core/errors/InternError"
import { limits } from "@switchyard/core/schema/Intern"
import { Cause, Config, Duration, Effect, Layer, SchemaIssue } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpIncomingMessage, HttpServerRequest } from "effect/http"
import { HttpApiBuilder, HttpApiError } from "effect/http-api"
import type { unhandled } from "effect/Types"
import { nulMessage, nulPaths } from "../http/NulCharacters.ts"
import { declaresBody, InternRequestTimeoutConfig } from "../http/RequestBody.ts"
import * as RequestHost from "../http/RequestHost.ts"
import * as StoreFailure from "../http/StoreFailure.ts"
import { InternControl } from "../interns/InternControl.ts"

// A store that does not answer: the intern envelope's 503, noted for the access log and `Retry-After`.
const answered = StoreFailure.answerAs(storeToInternError)

const requester = Effect.map(Caller, (caller) => ({ userId: caller.userId, workspaceId: caller.workspaceId }))

const refuseNul = (payload: unknown) => {
  const paths = nulPaths(payload)
  return paths.length === 0 ? Effect.void : Effect.fail(new InvalidBody({ message: nulMessage(paths) }))
}

export const InternsHandlers = HttpApiBuilder.group(
  Api,
  "interns",
  Effect.fn(function*(handlers) {
    // Each change writes its audit entry in its own store transaction (InternControl).
    const control = yield* InternControl
    return handlers
      .handle("create", ({ payload }) =>
        answered(Effect.flatMap(requester, (who) => Effect.andThen(refuseNul(payload), control.create(who, payload)))))
      .handle("list", ({ query }) => answered(Effect.flatMap(requester, (who) => control.list(who, query))))
      .handle("get", ({ params }) => answered(Effect.flatMap(requester, (who) => control.get(who, params.internId))))
      .handle("update", ({ params, payload }) =>
        answered(Effect.flatMap(requester, (who) => Effect.andThen(refuseNul(payload), control.update(who, params.internId, payload)))))
      .handle("delete", ({ params, payload }) =>
        answered(Effect.flatMap(requester, (who) =>
          control.remove(who, params.internId, payload?.acknowledge_workspace_loss === true).pipe(
            Effect.as({ deleting: true } as const)
          ))))
      .handle("provision", ({ params }) =>
        answered(Effect.flatMap(requester, (who) =>
          control.provision(who, params.internId).pipe(Effect.as({ provisioning: true } as const)))))
      .handle("suspend", ({ params }) =>
        answered(Effect.flatMap(requester, (who) =>
          control.suspend(who, params.internId).pipe(Effect.as({ suspended: true } as const)))))
  })
)

const PolicyConfig = Config.all({
  regionalHosts: Config.String("SWITCHYARD_REGIONAL_HOSTS").pipe(Config.withDefault("")),
  requestTimeoutMs: InternRequestTimeoutConfig,
  trustProxy: RequestHost.TrustProxyConfig
})

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const plainer: Record<string, string> = {
  "Expected no excess property": "is not a field of this body",
  "Expected object": "the body must be a JSON object"
}

const describeIssues = (error: HttpApiError.HttpApiSchemaError) => {
  const issues = formatIssues(error.cause.issue).issues.map((issue) => {
    const path = (issue.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join(".")
    const message = plainer[issue.message] ?? issue.message
    return path.length > 0 && !message.startsWith(path) ? `${path}: ${message}` : message
  })
  return issues.length > 0 ? issues.join("; ") : error.cause.message
}

const isBodyTooLarge = (defect: unknown) => {
  const reason = (defect as { readonly reason?: { readonly _tag?: string; readonly reason?: string } } | null)?.reason
  return reason?._tag === "RequestParseError" && reason.reason === "BodyTooLarge"
}

/**
 * The refusal of intern operations on a regional hostname (see `RegionalHosts` in core).
 */
export const RegionalHostsLive = Layer.effect(
  RegionalHosts,
  Effect.gen(function*() {
    const config = yield* PolicyConfig
    const regional = new Set(config.regionalHosts.split(",").map(RequestHost.normalize).filter((h) => h.length > 0))
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const host = RequestHost.of(request.headers, config.trustProxy)
        if (regional.has(host)) {
          return yield* new RegionalHostRefused({
            message: `Intern operations are not served on the regional hostname '${host}'; call the primary API host`
          })
        }
        return yield* httpEffect
      })
  })
)

/**
 * The request policy of the intern endpoints (see `InternPolicy` in core).
 */
export const InternPolicyLive = Layer.effect(
  InternPolicy,
  Effect.gen(function*() {
    const config = yield* PolicyConfig
    const timeout = Duration.millis(config.requestTimeoutMs)
    return (httpEffect, { endpoint }) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const takesNoBody = endpoint.payload.size === 0 && endpoint.method !== "GET"
        const handled = httpEffect.pipe(
          Effect.catch((error): Effect.Effect<never, unhandled | InvalidBody | InvalidRequest | InternalError> => {
            if (!HttpApiError.HttpApiSchemaError.is(error)) return Effect.fail(error)
            switch (error.kind) {
              case "Payload":
                return Effect.fail(new InvalidBody({ message: `Invalid body: ${describeIssues(error)}` }))
              case "Params":
              case "Query":
              case "Headers":
                return Effect.fail(new InvalidRequest({ message: `Invalid ${error.kind.toLowerCase()}: ${describeIssues(error)}` }))
              default:
                return Effect.logError("Intern response failed its schema", error.cause.message).pipe(
                  Effect.andThen(Effect.fail(new InternalError({ message: "The request could not be completed" })))
                )
            }
          }),
          Effect.timeoutOrElse({
            duration: timeout,
            orElse: () =>
              Effect.fail(new InternRequestTimeout({
                message: `The request did not complete within ${Duration.toMillis(timeout)} ms`
              }))
          })
        )
        const response = yield* Effect.gen(function*() {
          // The body is received before the time limit runs: interrupting its reader would close
          // the socket with no answer. A body that stalls gets the body deadline's 408 (Policies).
          if (declaresBody(request.headers)) {
            // A body that cannot be read (too large, nested too deep, cut off) is the client's error.
            const body = yield* request.arrayBuffer.pipe(
              Effect.mapError((error): PayloadTooLarge | InvalidBody =>
                isBodyTooLarge(error)
                  ? new PayloadTooLarge({ message: `The request body exceeds ${limits.body} bytes` })
                  : new InvalidBody({ message: "Invalid body: the request body could not be read" })
              )
            )
            if (takesNoBody && body.byteLength > 0) {
              return yield* new InvalidBody({ message: `Invalid body: ${endpoint.name} takes no request body` })
            }
          }
          return yield* handled
        }).pipe(
          Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limits.body)),
          Effect.catchDefect((defect): Effect.Effect<never, PayloadTooLarge | InternalError> =>
            isBodyTooLarge(defect)
              ? Effect.fail(new PayloadTooLarge({ message: `The request body exceeds ${limits.body} bytes` }))
              : Effect.logError("Intern request failed", Cause.die(defect)).pipe(
                Effect.andThen(Effect.fail(new InternalError({ message: "The request could not be completed" })))
              )
          )
        )
        if (response.status === 415) {
          const type = request.headers["content-type"] ?? "none"
          return yield* new UnsupportedMediaType({
            message: `Send the request body as application/json (Content-Type was ${type})`
          })
        }
        return response
      })
  })
)
