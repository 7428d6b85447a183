import type { RoutePlanReport } from "@switchyard/core/schema/RoutePlanReport"
import { assert, describe, it } from "vitest"
import { candidateReason, modeSentence, orderedCandidates } from "../src/RouteExplanation.ts"

type Explanation = RoutePlanReport["explanation"]

const explanation = (overrides: Partial<Explanation> = {}): Explanation => ({
  model: "acme/embed",
  mode: "default",
  seed: 7,
  allow_fallbacks: true,
  order: null,
  sort: null,
  candidates: [
    { id: "alpha/default", provider: "alpha", variant: "default", prompt_price: "0.1", status: "excluded", excluded_by: "zdr", detail: "zdr is required and this provider retains data" },
    { id: "gamma/default", provider: "gamma", variant: "default", prompt_price: "0.05", status: "attempt", rank: 2, weight: 0.16 },
    { id: "beta/default", provider: "beta", variant: "default", prompt_price: "0.02", status: "attempt", rank: 1, weight: 0.84, recent_failure: true }
  ],
  ...overrides
})

describe("RouteExplanation", () => {
  it("words each mode", () => {
    assert.match(modeSentence(explanation()), /^Load balanced/)
    assert.strictEqual(modeSentence(explanation({ mode: "order", order: ["gamma"], allow_fallbacks: false })), "Ordered by the request: gamma first; no fallbacks.")
    assert.strictEqual(modeSentence(explanation({ mode: "sort", sort: { by: "latency", partition: "model" } })), "Sorted by latency (no load balancing); fallbacks allowed.")
  })

  it("gives an excluded candidate's filter and detail", () => {
    assert.strictEqual(candidateReason(explanation().candidates[0]!), "zdr: zdr is required and this provider retains data")
  })

  it("gives what placed an attempt", () => {
    assert.strictEqual(candidateReason(explanation().candidates[2]!), "draw weight 0.84; pushed back: failed recently")
  })

  it("lists attempts by rank, then the excluded", () => {
    assert.deepStrictEqual(orderedCandidates(explanation()).map((c) => c.provider), ["beta", "gamma", "alpha"])
  })
})
