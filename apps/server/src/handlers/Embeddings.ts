import { Api } from "@switchyard/core/api/Api"
import type { Caller, CallerShape } from "@switchyard/core/api/Authorization"
import * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import * as ModelListing from "@switchyard/core/catalog/ModelListing"
import { type ApiError, BadRequest } from "@switchyard/core/schema/ApiError"
import { type EmbeddingRequest, inputCount } from "@switchyard/core/schema/EmbeddingRequest"
import { Config, Effect, Option, Result, type Scope, Tracer } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Readable } from "node:stream"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import * as Answer from "../embeddings/Answer.ts"
import { type CallOptions, Embeddings, type Served } from "../embeddings/Embeddings.ts"
import { Broadcast } from "../embeddings/Broadcast.ts"
import { resolveModel } from "../pipeline/Route.ts"
import * as TraceContext from "../pipeline/TraceContext.ts"
import * as GatewayLogger from "../observability/GatewayLogger.ts"
import * as RequestFacts from "../instrumentation/RequestFacts.ts"
import {
  answerCall,
  answerPlan,
  explainHeader,
  noteSession,
  planReport,
  type RequestHeaders,
  requireStandardKey,
  seedHeader,
  seedOf,
  sessionIdOf,
  truthy,
  usageFacts
} from "./ModelCall.ts"

/**
 * The most inputs one request may carry (`SWITCHYARD_MAX_INPUTS`, 2,048 like OpenAI's own limit):
 * what a request holds grows with its inputs, so larger work goes through `/batches`.
 */
const MaxInputsConfig = Config.Int("SWITCHYARD_MAX_INPUTS").pipe(Config.withDefault(2048))

/** Answers larger than this are written part by part; smaller ones in one write, as before. */
const streamedAbove = 1024 * 1024

/**
 * Refuses a request of more inputs than the limit with a 400 that names the limit and the way on.
 */
const withinInputLimit = (maxInputs: number) => (payload: EmbeddingRequest) => {
  const count = inputCount(payload)
  return count <= maxInputs
    ? Effect.void
    : Effect.fail(
      new BadRequest({
        message: `input has ${count} items; a request takes at most ${maxInputs} (SWITCHYARD_MAX_INPUTS). ` +
          `Split it into requests of at most ${maxInputs} inputs, or send the larger work through /api/v1/batches.`,
        metadata: { field: "input", max_inputs: maxInputs, inputs: count }
      })
    )
}

/**
 * Reads the per-request options the headers carry: the draw's seed, whether to explain the route,
 * and the session id (the body's `session_id` wins over `x-session-id`).
 */
const requestOptions = (payload: EmbeddingRequest, headers: RequestHeaders) =>
  Effect.gen(function*() {
    const seed = yield* seedOf(headers)
    const cache = CachePolicy.directive(headers[CachePolicy.header])
    if (Result.isFailure(cache)) {
      return yield* new BadRequest({ message: cache.failure, metadata: { field: CachePolicy.header } })
    }
    return {
      options: { seed, cache: cache.success } satisfies CallOptions,
      explain: truthy(headers[explainHeader]),
      sessionId: yield* sessionIdOf(payload, headers)
    }
  })

/**
 * An embeddings call from an authenticated caller to its answer and headers, given the services
 * it uses once: the one place the route's logic lives, whatever HTTP layer carries it. A large
 * answer comes as a stream written as its pieces return (`embeddings/Streamed.ts`).
 */
const serveWith = (embeddings: Embeddings["Service"], broadcast: Broadcast["Service"]) =>
  Effect.fnUntraced(function*(caller: CallerShape, payload: EmbeddingRequest, headers: RequestHeaders) {
    const { options, explain, sessionId } = yield* requestOptions(payload, headers)
    yield* noteSession(sessionId, payload.user)
    return yield* Effect.gen(function*() {
      const answered = yield* embeddings.answer(caller, payload, options).pipe(
        Effect.map((a) => a._tag === "Whole" ? a.served : a.progress),
        answerCall("embeddings", payload.model)
      )
      const parent = Option.getOrUndefined(yield* Effect.serviceOption(Tracer.ParentSpan))
      const published = (served: Served) =>
        broadcast.publish({ request: payload, served, caller, sessionId, parent }).pipe(
          Effect.andThen(GatewayLogger.debug("embeddings served", () => ({
            generation_id: served.id,
            endpoint: served.endpoint,
            prompt_tokens: served.promptTokens,
            attempts: served.attempts.length
          })))
        )
      const common = {
        "x-generation-id": answered.id,
        "x-switchyard-provider": answered.provider
      }
      if ("costNanos" in answered) {
        yield* published(answered)
        return {
          body: Answer.parts(answered, payload, explain),
          headers: {
            ...common,
            [CachePolicy.header]: answered.cache.outcome,
            "x-switchyard-cached-items": String(answered.cache.items),
            [seedHeader]: String(answered.plan.seed)
          }
        }
      }
      // Its access line is written once the body is (AccessLog.ts): with the tokens and cost settled.
      const noteLater = yield* RequestFacts.noteLater
      const settled = (served: Served) => Effect.sync(() => noteLater(usageFacts(served)))
      return {
        stream: answered.body((served) => published(served).pipe(Effect.as(Answer.tail(served, payload, explain))), settled),
        headers: {
          ...common,
          [CachePolicy.header]: answered.cache,
          "x-switchyard-cached-items": "0",
          [seedHeader]: String(answered.seed)
        }
      }
    }).pipe(TraceContext.within(TraceContext.annotationsOf(payload, sessionId)))
  })

/**
 * An embeddings call answered whole, for a route that shapes the served request itself (Cohere's
 * embed): the same key, limits, headers, routing, billing and broadcast as `POST /embeddings`.
 */
export const wholeCall = Effect.gen(function*() {
  const embeddings = yield* Embeddings
  const broadcast = yield* Broadcast
  const withinLimit = withinInputLimit(yield* MaxInputsConfig)
  const resolved = resolveModel(yield* CurrentCatalog)
  return Effect.fnUntraced(function*(payload: EmbeddingRequest, headers: RequestHeaders) {
    const caller = yield* requireStandardKey
    yield* withinLimit(payload)
    const request = yield* resolved(payload)
    const { options, sessionId } = yield* requestOptions(request, headers)
    yield* noteSession(sessionId, request.user)
    const served = yield* embeddings.create(caller, request, options).pipe(
      answerCall("embeddings", request.model),
      TraceContext.within(TraceContext.annotationsOf(request, sessionId))
    )
    const parent = Option.getOrUndefined(yield* Effect.serviceOption(Tracer.ParentSpan))
    yield* broadcast.publish({ request, served, caller, sessionId, parent })
    return {
      served,
      headers: {
        "x-generation-id": served.id,
        "x-switchyard-provider": served.provider,
        [CachePolicy.header]: served.cache.outcome,
        [seedHeader]: String(served.plan.seed)
      }
    }
  })
})

/**
 * `POST /embeddings` from a decoded request of an authenticated caller to its answer.
 */
const create = Effect.gen(function*() {
  const serve = serveWith(yield* Embeddings, yield* Broadcast)
  const withinLimit = withinInputLimit(yield* MaxInputsConfig)
  // A model named without its vendor becomes the one served model of that name (after the key
  // check, so a management key still gets its 403 first).
  const resolved = resolveModel(yield* CurrentCatalog)
  return Effect.fnUntraced(function*(payload: EmbeddingRequest, request: HttpServerRequest.HttpServerRequest) {
    const caller = yield* requireStandardKey
    yield* withinLimit(payload)
    const answer = yield* serve(caller, yield* resolved(payload), request.headers)
    if ("stream" in answer) {
      return HttpServerResponse.stream(answer.stream, { contentType: "application/json", headers: answer.headers })
    }
    const { chunks, length } = answer.body
    // A large answer goes to the socket part by part, from the upstream's own bytes, instead of
    // being joined into one more copy of itself first (the policies charge its length meanwhile).
    return length > streamedAbove
      ? HttpServerResponse.raw(Readable.from(chunks), { contentType: "application/json", contentLength: length, headers: answer.headers })
      : HttpServerResponse.uint8Array(Buffer.concat(chunks, length), { contentType: "application/json", headers: answer.headers })
  })
})

export const EmbeddingsHandlers = HttpApiBuilder.group(
  Api,
  "embeddings",
  Effect.fn(function*(handlers) {
    const embeddings = yield* Embeddings
    const loaded = yield* CurrentCatalog
    const serve = yield* create
    const resolved = resolveModel(loaded)
    const withinLimit = withinInputLimit(yield* MaxInputsConfig)
    return handlers
      .handle("create", ({ payload, request }) => serve(payload, request) as Effect.Effect<never, ApiError, Caller | Scope.Scope>)
      .handle("plan", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* requireStandardKey
          yield* withinLimit(payload)
          const { options } = yield* requestOptions(payload, (yield* HttpServerRequest.HttpServerRequest).headers)
          const dry = yield* embeddings.dryRun(caller, yield* resolved(payload), options).pipe(answerPlan)
          return planReport("embeddings", dry.plan, { tokens: dry.estimatedPromptTokens, worstNanos: dry.estimatedCostNanos })
        })
      )
      .handle("listModels", ({ query }) =>
        Effect.succeed(
          ModelListing.list(loaded.catalog, {
            isActive: (p) => loaded.active.has(p.slug),
            ...(query.limit !== undefined ? { limit: query.limit } : {}),
            ...(query.offset !== undefined ? { offset: query.offset } : {})
          })
        )
      )
  })
)
