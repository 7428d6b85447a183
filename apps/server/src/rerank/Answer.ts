import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import * as RerankRequest from "@switchyard/core/schema/RerankRequest"
import type { RerankResponse } from "@switchyard/core/schema/RerankResponse"
import { ignoredParameters, report } from "../pipeline/Route.ts"
import type { Reranked } from "./Rerank.ts"

/**
 * The answer's body: the scores best first, each with its document as sent (as OpenRouter answers;
 * `return_documents: false` leaves `document` empty), the billed usage, and the gateway's additions
 * (parameters the serving endpoint ignored; the route when explained).
 */
export const body = (served: Reranked, request: RerankRequest.RerankRequest, explain: boolean) => {
  const documents = request.return_documents === false ? undefined : RerankRequest.documents(request)
  const ignored = ignoredParameters(served.plan, served.endpoint, RerankRequest.sentParameters(request))
  const answer: RerankResponse & { switchyard?: unknown } = {
    id: served.id,
    model: served.model,
    provider: served.provider,
    results: served.results.map((r) => ({
      index: r.index,
      relevance_score: r.relevance_score,
      document: documents === undefined ? {} : documents[r.index]!
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
