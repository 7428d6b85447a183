import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Money from "../../src/catalog/Money.ts"
import type { Candidate } from "../../src/routing/Candidates.ts"
import type { EndpointStats } from "../../src/routing/EndpointStats.ts"
import * as Sorts from "../../src/routing/Sorts.ts"
import * as WeightedDraw from "../../src/routing/WeightedDraw.ts"
import { candidatesOf, catalogOf, specs } from "./fixtures.ts"

const now = 1_700_000_000_000

const withStats = specs.chain((ss) => {
  const candidates = candidatesOf(catalogOf(ss))
  const one = fc.record({
    latency: fc.option(fc.record({ p50: fc.double({ min: 0.01, max: 5, noNaN: true }) }), { nil: undefined }),
    throughput: fc.option(fc.record({ p50: fc.double({ min: 1, max: 5000, noNaN: true }) }), { nil: undefined }),
    lastFailureAt: fc.option(fc.integer({ min: now - 60_000, max: now }), { nil: undefined })
  })
  return fc.tuple(fc.constant(candidates), fc.array(one, { minLength: candidates.length, maxLength: candidates.length }))
    .map(([cs, st]) => [cs, Object.fromEntries(cs.map((c, i) => [c.id, st[i]!]))] as const)
})

const pairwise = <A>(xs: ReadonlyArray<A>, ok: (a: A, b: A) => boolean) =>
  xs.every((x, i) => i === 0 || ok(xs[i - 1]!, x))

const prompt = (c: Candidate) => Money.toAtto(c.endpoint.pricing.prompt)

describe("Sorts", () => {
  it("price is monotone: no endpoint follows a cheaper one", () => {
    fc.assert(fc.property(withStats, ([cs]) => {
      const sorted = Sorts.sort(cs, Sorts.byPrice, "none")
      return sorted.length === cs.length && pairwise(sorted, (a, b) => prompt(a) <= prompt(b))
    }))
  })

  it("throughput is monotone, unmeasured endpoints last", () => {
    fc.assert(fc.property(withStats, ([cs, stats]) => {
      const sorted = Sorts.sort(cs, Sorts.byThroughput(stats), "none")
      const t = (c: Candidate) => stats[c.id]?.throughput?.p50 ?? -Infinity
      return pairwise(sorted, (a, b) => t(a) >= t(b))
    }))
  })

  it("latency is monotone, unmeasured endpoints last", () => {
    fc.assert(fc.property(withStats, ([cs, stats]) => {
      const sorted = Sorts.sort(cs, Sorts.byLatency(stats), "none")
      const l = (c: Candidate) => stats[c.id]?.latency?.p50 ?? Infinity
      return pairwise(sorted, (a, b) => l(a) <= l(b))
    }))
  })

  it("exacto puts more precise weights first, then healthy, then cheap", () => {
    fc.assert(fc.property(withStats, ([cs, stats]) => {
      const sorted = Sorts.sort(cs, Sorts.byExacto(stats, now), "none")
      const key = (c: Candidate) => {
        const s: EndpointStats = stats[c.id] ?? {}
        const failed = s.lastFailureAt !== undefined && now - s.lastFailureAt < 30_000
        return [-Sorts.quantizationBits[c.endpoint.quantization], failed ? 1 : 0, Number(prompt(c))] as const
      }
      return pairwise(sorted, (a, b) => {
        const [x, y] = [key(a), key(b)]
        return x[0] < y[0] || (x[0] === y[0] && (x[1] < y[1] || (x[1] === y[1] && x[2] <= y[2])))
      })
    }))
  })

  it("partition model keeps models grouped in first-seen order", () => {
    const cs = candidatesOf(catalogOf([
      { slug: "alpha", prompt: "0.5", model: "a/x" },
      { slug: "beta", prompt: "0.1", model: "a/y" },
      { slug: "gamma", prompt: "0.2", model: "a/x" }
    ]))
    assert.deepStrictEqual(Sorts.sort(cs, Sorts.byPrice, "model").map((c) => c.provider.slug), ["gamma", "alpha", "beta"])
    assert.deepStrictEqual(Sorts.sort(cs, Sorts.byPrice, "none").map((c) => c.provider.slug), ["beta", "gamma", "alpha"])
  })
})

describe("WeightedDraw", () => {
  it("is a deterministic generator of floats in [0, 1)", () => {
    fc.assert(fc.property(fc.integer(), (seed) => {
      const a = WeightedDraw.mulberry32(seed)
      const b = WeightedDraw.mulberry32(seed)
      return Array.from({ length: 5 }, () => {
        const x = a()
        return x === b() && x >= 0 && x < 1
      }).every(Boolean)
    }))
  })

  it("weights by the inverse square of the price", () => {
    const w = WeightedDraw.inverseSquareWeights([1n, 2n, 4n])
    const total = 1 + 1 / 4 + 1 / 16
    assert.closeTo(w[0]!, 1 / total, 1e-12)
    assert.closeTo(w[1]!, 1 / 4 / total, 1e-12)
    assert.closeTo(w[2]!, 1 / 16 / total, 1e-12)
    assert.deepStrictEqual(WeightedDraw.inverseSquareWeights([0n, 5n, 0n]), [0.5, 0, 0.5])
    fc.assert(fc.property(fc.array(fc.bigInt({ min: 1n, max: 10n ** 20n }), { minLength: 1, maxLength: 10 }), (prices) => {
      const ws = WeightedDraw.inverseSquareWeights(prices)
      return Math.abs(ws.reduce((a, b) => a + b, 0) - 1) < 1e-9 && ws.every((x) => x > 0)
    }))
  })

  it("picks by cumulative weight and never a zero weight", () => {
    assert.strictEqual(WeightedDraw.pick([0.5, 0.5], 0.49), 0)
    assert.strictEqual(WeightedDraw.pick([0.5, 0.5], 0.5), 1)
    assert.strictEqual(WeightedDraw.pick([0, 1, 0], 0.999), 1)
    fc.assert(fc.property(fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 6 }).filter((xs) => xs.some((x) => x > 0)), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (raw, u) => {
      const total = raw.reduce((a, b) => a + b, 0)
      const i = WeightedDraw.pick(raw.map((x) => x / total), u)
      return raw[i]! > 0
    }))
  })
})
