import { assert, describe, it } from "@effect/vitest"
import { chunk } from "../../src/batch/BatchEmbed.ts"
import { duration, rateAndEta } from "../../src/batch/Progress.ts"

const items = (...sizes: Array<number>) => sizes.map((n, i) => ({ id: i, text: "x".repeat(n) }))

describe("BatchEmbed.chunk", () => {
  it("cuts by count, keeping order", () => {
    assert.deepStrictEqual(chunk(items(1, 1, 1, 1, 1), 2).map((b) => b.map((i) => i.id)), [[0, 1], [2, 3], [4]])
  })

  it("cuts by size too, but never leaves an item alone out of a batch", () => {
    assert.deepStrictEqual(chunk(items(4, 4, 4, 20, 1), 10, 10).map((b) => b.map((i) => i.id)), [[0, 1], [2], [3], [4]])
    assert.deepStrictEqual(chunk([], 3), [])
  })
})

describe("Progress", () => {
  it("computes the rate of this run and the time left", () => {
    assert.deepStrictEqual(rateAndEta({ done: 50, remaining: 150, elapsedMs: 10_000 }), { rate: 5, eta: 30 })
    assert.strictEqual(rateAndEta({ done: 0, remaining: 10, elapsedMs: 0 }).eta, Number.POSITIVE_INFINITY)
  })

  it("formats durations briefly", () => {
    assert.deepStrictEqual([duration(4.4), duration(75), duration(3725), duration(Number.POSITIVE_INFINITY)], ["4s", "1m15s", "1h02m", "?"])
  })
})
