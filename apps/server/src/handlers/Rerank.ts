import { Api } from "@switchyard/core/api/Api"
import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import * as ModelListing from "@switchyard/core/catalog/ModelListing"
import * as RerankRequest from "@switchyard/core/schema/RerankRequest"
import type { RerankResponse } from "@switchyard/core/schema/RerankResponse"
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { Rerank, type Reranked } from "../rerank/Rerank.ts"
import {
  answerCall,
  answerPlan,
  explainHeader,
  ignoredParameters,
  noteSession,
  planReport,
  report,
  requireStandardKey,
  resolveModel,
  seedHeader,
  seedOf,
  truthy
} from "./ModelCall.ts"

/**
 * The answer's body: the scores best first with the documents when asked, the billed usage, and
 * the gateway's additions (parameters the serving endpoint ignored; the route when explained).
 */
export const body = (served: Reranked, request: RerankRequest.RerankRequest, explain: boolean) => {
  const texts = request.return_documents === true ? RerankRequest.texts(request) : undefined
  const ignored = ignoredParameters(served.plan, served.endpoint, RerankRequest.sentParameters(request))
  const answer: RerankResponse & { switchyard?: unknown } = {
    id: served.id,
    model: served.model,
    provider: served.provider,
    results: served.results.map((r) => ({
      index: r.index,
      relevance_score: r.relevance_score,
      document: texts === undefined ? {} : { text: texts[r.index]! }
    })),
    usage: {
      search_units: served.searchUnits,
      total_tokens: served.totalTokens,
      cost: creditsFromNanos(served.costNanos),
      is_byok: served.isByok
    }
  }
  return explain || ignored.length > 0
    ? {
      ...answer,
      switchyard: {
        ...(ignored.length > 0 ? { ignored_parameters: ignored } : {}),
        ...(explain ? { routing: { ...report(served.plan), tried: served.attempts } } : {})
      }
    }
    : answer
}

export const RerankHandlers = HttpApiBuilder.group(
  Api,
  "rerank",
  Effect.fn(function*(handlers) {
    const rerank = yield* Rerank
    const loaded = yield* CurrentCatalog
    const resolved = resolveModel(loaded)
    return handlers.handle("listModels", ({ query }) =>
      Effect.succeed(ModelListing.list(loaded.catalog, {
        task: "rerank",
        path: "/api/v1/rerank/models",
        isActive: (p) => loaded.active.has(p.slug),
        ...(query.limit !== undefined ? { limit: query.limit } : {}),
        ...(query.offset !== undefined ? { offset: query.offset } : {})
      }))
    ).handle("plan", ({ payload }) =>
      Effect.gen(function*() {
        const caller = yield* requireStandardKey
        const seed = yield* seedOf((yield* HttpServerRequest.HttpServerRequest).headers)
        const dry = yield* rerank.dryRun(caller, yield* resolved(payload), { seed }).pipe(answerPlan)
        return planReport("rerank", dry.plan, { tokens: dry.tokenBound, worstNanos: dry.worstNanos })
      })
    ).handle("create", ({ payload }) =>
      Effect.gen(function*() {
        const caller = yield* requireStandardKey
        const headers = (yield* HttpServerRequest.HttpServerRequest).headers
        const seed = yield* seedOf(headers)
        const request = yield* resolved(payload)
        yield* noteSession(request.session_id ?? headers["x-session-id"], request.user)
        const served = yield* rerank.create(caller, request, { seed }).pipe(answerCall("rerank", request.model))
        return HttpServerResponse.jsonUnsafe(body(served, request, truthy(headers[explainHeader])), {
          headers: {
            "x-generation-id": served.id,
            "x-switchyard-provider": served.provider,
            [seedHeader]: String(served.plan.seed)
          }
        }) as never
      })
    )
  })
)
