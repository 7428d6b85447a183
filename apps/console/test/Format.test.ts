import { assert, describe, it } from "vitest"
import * as Format from "../src/Format.ts"

describe("Format.perMillion", () => {
  it("moves a per-token price six places, exactly", () => {
    assert.strictEqual(Format.perMillion("0.0000004"), "0.4")
    assert.strictEqual(Format.perMillion("0.00000001"), "0.01")
    assert.strictEqual(Format.perMillion("0.000000123456789"), "0.123456789")
    assert.strictEqual(Format.perMillion("0"), "0")
    assert.strictEqual(Format.perMillion("1.5"), "1500000")
  })
})

describe("Format.money", () => {
  it("keeps the precision an amount has: never $0.00 for one that is not zero", () => {
    assert.strictEqual(Format.money(0), "$0.00")
    assert.strictEqual(Format.money(1.5), "$1.50")
    assert.strictEqual(Format.money(0.0000001), "$0.0000001")
    assert.strictEqual(Format.money(6e-8), "$0.00000006")
    assert.strictEqual(Format.money(1.234e-7), "$0.000000123")
    assert.strictEqual(Format.money(0.000042), "$0.000042")
    assert.strictEqual(Format.money(null), "-")
  })
})
