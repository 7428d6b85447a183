import { Api } from "@switchyard/core/api/Api"
import type { Caller } from "@switchyard/core/api/Authorization"
import type { ApiError } from "@switchyard/core/schema/ApiError"
import * as ModelListing from "@switchyard/core/catalog/ModelListing"
import type * as RerankRequest from "@switchyard/core/schema/RerankRequest"
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentCatalog, type LoadedCatalog } from "../catalog/CatalogLoader.ts"
import * as TraceContext from "../pipeline/TraceContext.ts"
import { resolveModel } from "../pipeline/Route.ts"
import * as Answer from "../rerank/Answer.ts"
import { Rerank } from "../rerank/Rerank.ts"
import * as ModelCall from "./ModelCall.ts"

/**
 * A rerank call from an authenticated caller to its served result and the answer's headers: the
 * one place the route's logic lives, for `POST /rerank` and Cohere's `POST /api/v2/rerank`.
 */
export const serveWith = (rerank: Rerank["Service"], loaded: LoadedCatalog) => {
  const resolved = resolveModel(loaded)
  return Effect.fnUntraced(function*(payload: RerankRequest.RerankRequest, headers: ModelCall.RequestHeaders) {
    const caller = yield* ModelCall.requireStandardKey
    const seed = yield* ModelCall.seedOf(headers)
    const sessionId = yield* ModelCall.sessionIdOf(payload, headers)
    const request = yield* resolved(payload)
    yield* ModelCall.noteSession(sessionId, request.user)
    const served = yield* rerank.create(caller, request, { seed }).pipe(
      ModelCall.answerCall("rerank", request.model),
      TraceContext.within(TraceContext.annotationsOf(request, sessionId))
    )
    return {
      served,
      request,
      headers: {
        "x-generation-id": served.id,
        "x-switchyard-provider": served.provider,
        [ModelCall.seedHeader]: String(served.plan.seed)
      }
    }
  })
}

/**
 * `POST /rerank` from a decoded request to its answer (the key is checked first).
 */
const create = Effect.gen(function*() {
  const serve = serveWith(yield* Rerank, yield* CurrentCatalog)
  return Effect.fnUntraced(function*(payload: RerankRequest.RerankRequest, request: HttpServerRequest.HttpServerRequest) {
    const answer = yield* serve(payload, request.headers)
    return HttpServerResponse.jsonUnsafe(Answer.body(answer.served, answer.request, ModelCall.truthy(request.headers[ModelCall.explainHeader])), {
      headers: answer.headers
    })
  })
})

export const RerankHandlers = HttpApiBuilder.group(
  Api,
  "rerank",
  Effect.fn(function*(handlers) {
    const rerank = yield* Rerank
    const loaded = yield* CurrentCatalog
    const resolved = resolveModel(loaded)
    const serve = yield* create
    return handlers.handle("listModels", ({ query }) =>
      Effect.succeed(ModelListing.list(loaded.catalog, {
        tasks: ["rerank"],
        path: "/api/v1/rerank/models",
        isActive: (p) => loaded.active.has(p.slug),
        ...(query.limit !== undefined ? { limit: query.limit } : {}),
        ...(query.offset !== undefined ? { offset: query.offset } : {})
      }))
    ).handle("plan", ({ payload }) =>
      Effect.gen(function*() {
        const caller = yield* ModelCall.requireStandardKey
        const headers = (yield* HttpServerRequest.HttpServerRequest).headers
        const seed = yield* ModelCall.seedOf(headers)
        yield* ModelCall.sessionIdOf(payload, headers)
        const dry = yield* rerank.dryRun(caller, yield* resolved(payload), { seed }).pipe(ModelCall.answerPlan)
        return ModelCall.planReport("rerank", dry.plan, { tokens: dry.tokenBound, worstNanos: dry.worstNanos })
      })
    ).handle("create", ({ payload, request }) => serve(payload, request) as Effect.Effect<never, ApiError, Caller>)
  })
)
