import type { ActivityItem } from "@switchyard/core/schema/Activity"
import { assert, describe, it } from "vitest"
import * as CacheSummary from "../src/CacheSummary.ts"

const row = (model: string, provider: string, prompt: number, cached: number, saved: number): ActivityItem => ({
  date: "2026-11-25",
  model,
  model_permaslug: model,
  endpoint_id: `${provider}@${model}`,
  provider_name: provider,
  usage: 0,
  byok_usage_inference: 0,
  requests: 1,
  prompt_tokens: prompt,
  completion_tokens: 0,
  reasoning_tokens: 0,
  cached_tokens: cached,
  cache_savings: saved
})

describe("CacheSummary", () => {
  it("sums each model's tokens over days and providers: the cached share and the dollars saved", () => {
    const summary = CacheSummary.byModel([
      row("acme/embed", "alpha", 100, 25, 0.0000025),
      row("acme/embed", "beta", 100, 75, 0.0000015),
      row("acme/large", "alpha", 50, 0, 0),
      row("acme/idle", "alpha", 0, 0, 0)
    ])
    assert.deepStrictEqual(summary.map((m) => [m.model, m.promptTokens, m.cachedTokens, m.hitRate]), [
      ["acme/embed", 200, 100, 0.5],
      ["acme/large", 50, 0, 0],
      ["acme/idle", 0, 0, undefined]
    ])
    assert.closeTo(summary[0]!.saved, 0.000004, 1e-12)
  })

  it("reads rows of a gateway that reports no cache figures as nothing cached", () => {
    const { cached_tokens: _c, cache_savings: _s, ...plain } = row("acme/embed", "alpha", 10, 0, 0)
    assert.deepStrictEqual(CacheSummary.byModel([plain]).map((m) => [m.cachedTokens, m.saved]), [[0, 0]])
  })
  it("keeps rerank models out: the table is the embeddings cache's", () => {
    const summary = CacheSummary.byModel([
      row("acme/embed", "alpha", 100, 25, 0.0000025),
      { ...row("cohere/rerank-v3.5", "cohere", 300, 0, 0), task: "rerank" }
    ])
    assert.deepStrictEqual(summary.map((m) => m.model), ["acme/embed"])
  })
})
