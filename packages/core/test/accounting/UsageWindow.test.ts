import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { nanosFromCredits } from "../../src/accounting/UsageWindow.ts"

// What the parser read a number as when it went through Intl's number formatting (below 1e21): the
// reference the plain-decimal writing must match, digit for digit.
const throughIntl = (n: number): bigint | undefined => {
  const text = Math.abs(n) < 1e21 ? n.toLocaleString("en-US", { useGrouping: false, maximumFractionDigits: 20 }) : ""
  const match = /^(-?)(\d+)(?:\.(\d{1,9})\d*)?$/u.exec(text)
  if (match === null) return undefined
  const nanos = BigInt(match[2]!) * 1_000_000_000n + BigInt((match[3] ?? "").padEnd(9, "0"))
  return match[1] === "-" ? -nanos : nanos
}

describe("nanosFromCredits", () => {
  it("reads a JSON number exactly, tiny and large ones included, rounding at the 20th digit as Intl does", () => {
    assert.strictEqual(nanosFromCredits(0.05), 50_000_000n)
    assert.strictEqual(nanosFromCredits(1e-7), 100n)
    assert.strictEqual(nanosFromCredits(-3.25), -3_250_000_000n)
    assert.strictEqual(nanosFromCredits(1e20), 100_000_000_000_000_000_000_000_000_000n)
    // 0.000000000999999999999999: its 20th fractional digit rounds up into the ninth.
    assert.strictEqual(nanosFromCredits(9.99999999999999e-10), 1n)
    assert.strictEqual(nanosFromCredits(1e21), undefined)
    assert.strictEqual(nanosFromCredits(Number.NaN), undefined)
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e21, max: 1e21 }), (n) => nanosFromCredits(n) === throughIntl(n)),
      { numRuns: 20_000 }
    )
  })
})
