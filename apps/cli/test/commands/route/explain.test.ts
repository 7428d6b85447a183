import { assert, describe, it } from "@effect/vitest"
import type { RoutePlanReport } from "@switchyard/core/schema/RoutePlanReport"
import { reason } from "../../../src/commands/route/explain.ts"

const report = (explanation: Partial<RoutePlanReport["explanation"]>): RoutePlanReport => ({
  object: "embeddings.plan",
  model: "acme/embed",
  attempts: [],
  estimate: { prompt_tokens: 1, cost: 0 },
  explanation: { model: "acme/embed", mode: "default", seed: 1, allow_fallbacks: true, order: null, sort: null, candidates: [], ...explanation }
})

const candidate = (fields: Partial<RoutePlanReport["explanation"]["candidates"][number]>) => ({
  id: "alpha:default",
  provider: "alpha",
  variant: "default",
  prompt_price: "0.02",
  status: "attempt" as const,
  ...fields
})

describe("route explain", () => {
  it("says why an endpoint is out", () => {
    const r = report({})
    assert.strictEqual(reason(candidate({ status: "excluded", excluded_by: "zdr", detail: "retains data" }), r.explanation), "out: zdr (retains data)")
    assert.strictEqual(reason(candidate({ status: "unused" }), r.explanation), "out: eligible, but fallbacks are off")
  })

  it("says why an endpoint is in, and why it comes later", () => {
    const drawn = report({ draw: { u: 0.3, pool: ["alpha:default"] } })
    assert.strictEqual(reason(candidate({ rank: 0, weight: 0.75 }), drawn.explanation), "drawn at random, weight 0.750")
    assert.strictEqual(
      reason(candidate({ rank: 1, order_match: "alpha", meets_cutoffs: false, recent_failure: true }), report({ mode: "order" }).explanation),
      "listed in --order as alpha; misses the latency/throughput preference, so later; failed in the last 30s, so later"
    )
    assert.strictEqual(reason(candidate({ rank: 2, sort_key: 0.02 }), report({ mode: "sort", sort: { by: "price", partition: "model" } }).explanation), "price 0.02")
    assert.strictEqual(reason(candidate({ rank: 0 }), report({}).explanation), "first choice")
    assert.strictEqual(reason(candidate({ rank: 3 }), report({}).explanation), "fallback")
  })
})
