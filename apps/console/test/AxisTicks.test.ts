import { assert, describe, it } from "vitest"
import * as AxisTicks from "../src/AxisTicks.ts"
import * as Format from "../src/Format.ts"

describe("AxisTicks", () => {
  it("steps evenly from 0 past the highest value, every label with the same decimals", () => {
    const axis = AxisTicks.nice(0.000097)
    assert.deepStrictEqual(axis.ticks, [0, 0.00005, 0.0001])
    assert.strictEqual(axis.decimals, 5)
    assert.deepStrictEqual(axis.ticks.map(Format.moneyTick(axis.decimals)), ["$0.00000", "$0.00005", "$0.00010"])
    assert.deepStrictEqual(AxisTicks.nice(0.00014).ticks, [0, 0.00005, 0.0001, 0.00015])
  })

  it("counts in whole steps", () => {
    assert.deepStrictEqual(AxisTicks.nice(30, { integers: true }).ticks, [0, 10, 20, 30])
    assert.deepStrictEqual(AxisTicks.nice(3, { integers: true }).ticks, [0, 1, 2, 3])
    assert.deepStrictEqual(AxisTicks.nice(0.3, { integers: true }).ticks, [0, 1])
    assert.strictEqual(AxisTicks.nice(3, { integers: true }).decimals, 0)
  })

  it("keeps a step that floating point makes a hair too small", () => {
    assert.deepStrictEqual(AxisTicks.nice(0.3, { intervals: 3 }).ticks, [0, 0.1, 0.2, 0.3])
  })

  it("draws an axis without values", () => {
    assert.deepStrictEqual(AxisTicks.nice(0).ticks, [0, 1])
  })

  it("is as wide as its longest label", () => {
    assert.isAbove(AxisTicks.width(["$0.00000", "$0.00010"]), AxisTicks.width(["0", "30"]))
  })
})
