import type { FailureRecord } from "@switchyard/core/schema/Activity"
import { retryAfterSeconds } from "@switchyard/core/store/StoreUnavailable"
import { Cause, Clock, Context, Effect, Exit, Stream, type Types } from "effect"
import { HttpBody, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import type * as Http from "node:http"
import * as ClientErrors from "../http/ClientErrors.ts"
import * as Policies from "../http/Policies.ts"
import { GatewayMetrics } from "./GatewayMetrics.ts"
import { RecentFailures } from "./RecentFailures.ts"
import { CurrentRequestFacts, type RequestFacts } from "../instrumentation/RequestFacts.ts"
import * as RouteTemplates from "./RouteTemplates.ts"

/**
 * What a failed request's line says about its cause: the error's own message when it is one of
 * the API's errors (already written for the caller, credentials taken out), the whole cause when
 * it is a defect (a bug: the stack trace is what an operator needs).
 */
const describe = (cause: Cause.Cause<unknown>): { readonly fields: Record<string, unknown>; readonly cause?: Cause.Cause<unknown> } => {
  const failure = cause.reasons.find(Cause.isFailReason)
  if (failure !== undefined && cause.reasons.every((r) => !Cause.isDieReason(r))) {
    const error = failure.error as { readonly _tag?: unknown; readonly message?: unknown; readonly metadata?: Record<string, unknown> }
    const metadata = error.metadata ?? {}
    return {
      fields: {
        error: typeof error.message === "string" ? error.message : String(error),
        ...(typeof error._tag === "string" ? { error_tag: error._tag } : {}),
        ...(typeof metadata.reason === "string" ? { reason: metadata.reason } : {}),
        ...(typeof metadata.upstream_status === "number" ? { upstream_status: metadata.upstream_status } : {})
      }
    }
  }
  return { fields: {}, cause }
}

const utf8 = new TextDecoder()

// An API error is encoded into its answer before the access log sees it: its envelope's message and
// metadata (written for the caller, credentials already taken out; a schema error names fields and
// rules, never values) are the cause of a 5xx and the reason of a 4xx, whose message is cut to a
// line. `reason` is the metadata's, else a string code (the intern operations').
const maxRefusalLength = 200
const envelopeOf = (response: HttpServerResponse.HttpServerResponse, short = false): Record<string, unknown> => {
  // A bodiless answer (an unmatched route) gets its envelope after this sees it, from the policies.
  if (response.body._tag === "Empty") return { error: Policies.messageFor(response.status) }
  if (response.body._tag !== "Uint8Array") return {}
  try {
    const error = JSON.parse(utf8.decode(response.body.body))?.error
    if (typeof error !== "object" || error === null) return {}
    const metadata = typeof error.metadata === "object" && error.metadata !== null ? error.metadata : {}
    const message: unknown = error.message
    const reason: unknown = typeof metadata.reason === "string" ? metadata.reason : error.code
    return {
      ...(typeof message === "string"
        ? { error: short && message.length > maxRefusalLength ? `${message.slice(0, maxRefusalLength - 1)}…` : message }
        : {}),
      ...(typeof reason === "string" ? { reason } : {}),
      ...(typeof metadata.upstream_status === "number" ? { upstream_status: metadata.upstream_status } : {})
    }
  } catch {
    return {}
  }
}

const lineOf = (
  request: HttpServerRequest.HttpServerRequest,
  route: string,
  status: number,
  millis: number,
  facts: RequestFacts
): Record<string, unknown> => {
  const query = request.url.indexOf("?")
  const line: Record<string, unknown> = {
    method: request.method,
    route,
    path: query === -1 ? request.url : request.url.slice(0, query),
    status,
    duration_ms: Math.round(millis * 100) / 100
  }
  if (facts.key !== undefined) line.key = facts.key
  if (facts.generation_id !== undefined) line.generation_id = facts.generation_id
  if (facts.task !== undefined) line.task = facts.task
  if (facts.model !== undefined) line.model = facts.model
  if (facts.session_id !== undefined) line.session_id = facts.session_id
  if (facts.user !== undefined) line.user = facts.user
  if (facts.provider !== undefined) line.provider = facts.provider
  if (facts.attempts !== undefined) line.attempts = facts.attempts.length
  if (facts.tokens !== undefined) line.tokens = facts.tokens
  if (facts.cached_tokens !== undefined) line.cached_tokens = facts.cached_tokens
  if (facts.cost !== undefined) line.cost = facts.cost
  if (facts.byok !== undefined) line.byok = facts.byok
  line.cache = facts.cache ?? "off"
  if (facts.rate_limited === true) line.rate_limited = true
  return line
}

// A failed model call as the workspace's list of recent failures shows it.
const failureOf = (
  now: number,
  task: "embeddings" | "rerank",
  status: number,
  facts: RequestFacts,
  envelope: Record<string, unknown>
): Omit<FailureRecord, "id"> => ({
  at: new Date(now).toISOString(),
  status,
  task,
  model: facts.model ?? null,
  provider: facts.provider ?? null,
  reason: typeof envelope.reason === "string" ? envelope.reason : null,
  message: typeof envelope.error === "string" ? envelope.error : `HTTP ${status}`,
  key: facts.key ?? null,
  attempts: (facts.attempts ?? []).map((a) => ({ provider: a.provider, outcome: a.outcome, reason: a.reason ?? null }))
})

/**
 * One access line per request (`message: "request"`: method, route template, path without its
 * query, `status`, `duration_ms`, `cache` (what the embeddings cache did, `off` where none was
 * consulted), and what the request's parts noted: key hash prefix, generation id, model, session
 * and user, provider, attempts, tokens, cost; a 4xx's reason), at `info`, `warn` for a 5xx an upstream caused and
 * `error` for the gateway's own 500, which carries its cause. The same facts feed the metrics.
 * Installed first, so it sees every answer the routes give, the policies' refusals included.
 */
export const layer = HttpRouter.middleware(
  Effect.gen(function*() {
    const metrics = yield* GatewayMetrics
    const failures = yield* RecentFailures
    const routes = RouteTemplates.make()
    return (app: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>) =>
      Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const started = performance.now()
        const facts: RequestFacts = {}
        const write = (
          response: HttpServerResponse.HttpServerResponse,
          cause: Cause.Cause<unknown> | undefined,
          status: number,
          line: Record<string, unknown>
        ) => {
          if (status < 400) return Effect.logInfo("request").pipe(Effect.annotateLogs(line))
          if (status < 500) return Effect.logInfo("request").pipe(Effect.annotateLogs({ ...line, ...envelopeOf(response, true) }))
          const store = facts.store_unavailable
          if (store !== undefined) {
            // The one line of a store failure: at error level, with what the store answered.
            return Effect.logError("request", Cause.fail(store.cause)).pipe(
              Effect.annotateLogs({ ...line, ...envelopeOf(response), store_operation: store.operation })
            )
          }
          const log = status === 500 ? Effect.logError : Effect.logWarning
          if (cause === undefined) return log("request").pipe(Effect.annotateLogs({ ...line, ...envelopeOf(response) }))
          const described = describe(cause)
          return (described.cause === undefined ? log("request") : log("request", described.cause)).pipe(
            Effect.annotateLogs({ ...line, ...described.fields })
          )
        }
        const finish = (response: HttpServerResponse.HttpServerResponse, cause: Cause.Cause<unknown> | undefined) => {
          const status = response.status
          const millis = performance.now() - started
          const route = routes.of(request.method, request.url)
          metrics.record({ method: request.method, route, status, seconds: millis / 1000, facts })
          const written = write(response, cause, status, lineOf(request, route, status, millis, facts))
          const { task, workspace } = facts
          if (status < 400 || task === undefined || workspace === undefined) return written
          // A failed model call is also kept for its workspace's list of recent failures.
          return Clock.currentTimeMillis.pipe(
            Effect.map((now) => failures.add(workspace, failureOf(now, task, status, facts, envelopeOf(response)))),
            Effect.andThen(written)
          )
        }
        return app.pipe(
          // A store failure, or memory held by the requests in flight, is worth retrying shortly: its 503 says when.
          Effect.map((response) =>
            facts.store_unavailable !== undefined
              ? HttpServerResponse.setHeader(response, "retry-after", String(retryAfterSeconds))
              : facts.memory_busy !== undefined
              ? HttpServerResponse.setHeader(response, "retry-after", String(facts.memory_busy))
              : response
          ),
          Effect.provideService(CurrentRequestFacts, facts),
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? exit.value.body._tag === "Stream" ? Effect.void : finish(exit.value, undefined)
              : HttpServerError.causeResponse(exit.cause).pipe(
                Effect.flatMap(([response]) => {
                  // Node's parser refused the rest of the request and answered it (ClientErrors.ts).
                  const parsed = Cause.hasInterruptsOnly(exit.cause)
                    ? ClientErrors.parserAnswer(NodeHttpServerRequest.toServerResponse(request) as Http.ServerResponse)
                    : undefined
                  return parsed === undefined
                    ? finish(response, exit.cause)
                    : finish(Policies.envelopeFor(request.url, parsed.status, parsed.message), undefined)
                })
              )
          ),
          // An answer written as it is made (a stream) is logged when its body ends, written or cut
          // off by its client, with the tokens and cost its end noted.
          Effect.map((response) =>
            response.body._tag === "Stream"
              ? HttpServerResponse.setBody(
                response,
                HttpBody.stream(
                  Stream.onExit(response.body.stream, () => finish(response, undefined)),
                  response.body.contentType,
                  response.body.contentLength
                )
              )
              : response
          )
        )
      })
  }),
  { global: true }
)
