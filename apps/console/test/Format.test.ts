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
