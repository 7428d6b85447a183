import { assert, describe, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import * as fc from "fast-check"
import * as Cost from "../../src/catalog/Cost.ts"
import * as Money from "../../src/catalog/Money.ts"

const atto = fc.bigInt({ min: 0n, max: 10n ** 30n })
const price = fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 6n }), fc.bigInt({ min: 0n, max: 10n ** 12n - 1n }))
  .map(([whole, frac]) => Money.toDecimal(whole * 10n ** 18n + frac * 10n ** 6n))

describe("Money", () => {
  it("round-trips atto-dollars through decimal strings", () => {
    fc.assert(fc.property(atto, (a) => Money.toAtto(Money.toDecimal(a)) === a))
    assert.strictEqual(Money.toDecimal(140_000_000_000n), "0.00000014")
    assert.strictEqual(Money.toDecimal(0n), "0")
    assert.strictEqual(Money.toAtto("0.02"), 20_000_000_000_000_000n)
    assert.strictEqual(Money.toAtto("1.000"), 10n ** 18n)
  })

  it("accepts exactly the decimal strings it can parse", () => {
    fc.assert(fc.property(fc.stringMatching(/^[0-9.\-e ]{0,8}$/), (s) => {
      const valid = Exit.isSuccess(Schema.decodeUnknownExit(Money.Decimal)(s))
      let parsed = true
      try {
        Money.toAtto(s)
      } catch {
        parsed = false
      }
      return valid === parsed
    }))
  })

  it("compares exactly where floats would not", () => {
    assert.strictEqual(Money.compare("0.3", "0.1"), 1)
    assert.strictEqual(Money.toAtto("0.1") + Money.toAtto("0.2"), Money.toAtto("0.3"))
    assert.strictEqual(Money.compare("0.000000000000000001", "0"), 1)
    assert.strictEqual(Money.compare("2", "2.0"), 0)
  })

  it("rounds to coarser units as asked", () => {
    fc.assert(fc.property(atto, fc.integer({ min: 0, max: 18 }), (a, digits) => {
      const unit = 10n ** BigInt(18 - digits)
      const down = Money.toUnits(a, digits, "down")
      const up = Money.toUnits(a, digits, "up")
      const even = Money.toUnits(a, digits, "half-even")
      return down * unit <= a && a <= up * unit && up - down <= 1n && (even === down || even === up) &&
        (a % unit === 0n ? down === up : up === down + 1n)
    }))
    assert.strictEqual(Money.toUnits(Money.toAtto("0.0000025"), 6, "half-even"), 2n)
    assert.strictEqual(Money.toUnits(Money.toAtto("0.0000035"), 6, "half-even"), 4n)
    assert.strictEqual(Money.toUnits(Money.toAtto("0.00000014"), 6, "up"), 1n)
  })
})

describe("Cost", () => {
  it("is exact: a million tokens cost exactly the per-million price", () => {
    fc.assert(fc.property(price, fc.nat({ max: 10_000_000 }), (p, tokens) => {
      const cost = Cost.compute({ prompt: p, completion: "0", request: "0", image: "0", audio: "0", search: "0" }, { prompt_tokens: tokens })
      return cost.prompt * 1_000_000n === BigInt(tokens) * Money.toAtto(p) && cost.total === cost.prompt
    }))
  })

  it("adds every price component", () => {
    const cost = Cost.compute(
      { prompt: "0.02", completion: "0.5", request: "0.001", image: "0.0001", audio: "0.002", search: "0" },
      { prompt_tokens: 7, completion_tokens: 2, images: 3, audio_units: 1 }
    )
    assert.strictEqual(Money.toDecimal(cost.prompt), "0.00000014")
    assert.strictEqual(Money.toDecimal(cost.completion), "0.000001")
    assert.strictEqual(Money.toDecimal(cost.request), "0.001")
    assert.strictEqual(Money.toDecimal(cost.image), "0.0003")
    assert.strictEqual(Money.toDecimal(cost.audio), "0.002")
    assert.strictEqual(Money.toDecimal(cost.total), "0.00330114")
    assert.deepStrictEqual(Cost.toUsage(cost), {
      cost: 0.00330114,
      cost_details: {
        upstream_inference_prompt_cost: 0.00330014,
        upstream_inference_completions_cost: 0.000001,
        upstream_inference_cost: 0.00330114
      },
      is_byok: false
    })
  })

  it("refuses impossible counts", () => {
    const pricing = { prompt: "1", completion: "0", request: "0", image: "0", audio: "0", search: "0" }
    assert.throws(() => Cost.compute(pricing, { prompt_tokens: -1 }))
    assert.throws(() => Cost.compute(pricing, { prompt_tokens: 1.5 }))
  })

  it("publishes per-token prices", () => {
    assert.strictEqual(Cost.perToken("0.02"), "0.00000002")
    assert.strictEqual(Cost.perToken("0.13"), "0.00000013")
    assert.strictEqual(Cost.perToken("0"), "0")
  })
})
