import type { ActivityItem } from "@switchyard/core/schema/Activity"

/**
 * What the embeddings cache did for one model over the activity's days.
 */
export interface ModelCache {
  readonly model: string
  /** Prompt tokens of the model's requests, the cached ones included. */
  readonly promptTokens: number
  /** The part the cache answered. */
  readonly cachedTokens: number
  /** `cachedTokens / promptTokens`; undefined without tokens. */
  readonly hitRate: number | undefined
  /** What the cached tokens would have cost at the endpoints' current prompt prices, USD. */
  readonly saved: number
}

/**
 * The cache's share of each model's prompt tokens and the dollars it saved, from `GET /activity`
 * rows (one per day, model and provider): by dollars saved, then cached and prompt tokens.
 */
export const byModel = (rows: ReadonlyArray<ActivityItem>): ReadonlyArray<ModelCache> => {
  const models = new Map<string, { promptTokens: number; cachedTokens: number; saved: number }>()
  for (const row of rows) {
    // The cache is the embeddings cache: a rerank model has no row here.
    if (row.task === "rerank") continue
    const sum = models.get(row.model) ?? { promptTokens: 0, cachedTokens: 0, saved: 0 }
    sum.promptTokens += row.prompt_tokens
    sum.cachedTokens += row.cached_tokens ?? 0
    sum.saved += row.cache_savings ?? 0
    models.set(row.model, sum)
  }
  return [...models].map(([model, sum]) => ({
    model,
    ...sum,
    hitRate: sum.promptTokens === 0 ? undefined : sum.cachedTokens / sum.promptTokens
  })).sort((a, b) =>
    b.saved - a.saved || b.cachedTokens - a.cachedTokens || b.promptTokens - a.promptTokens || a.model.localeCompare(b.model)
  )
}
