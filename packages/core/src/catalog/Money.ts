/**
 * Exact USD amounts: decimal strings on the wire and in the config file, integers of
 * 10^-18 USD ("atto-dollars", `bigint`) in arithmetic.
 *
 * **When to use**
 *
 * Whenever a price or a cost is read, compared, summed or turned into `usage.cost`. Never do
 * money arithmetic on JavaScript numbers: `0.1 + 0.2` is not `0.3`.
 *
 * **Details**
 *
 * A catalog price has at most 12 fractional digits ({@link Price}). A per-million-token price
 * times a token count divided by a million is then still a whole number of atto-dollars, so
 * every cost computed by `Cost.compute` is exact. Limits sent by callers (`max_price`) may have
 * up to 18 fractional digits ({@link Decimal}) and are compared exactly.
 *
 * **Gotchas**
 *
 * {@link toAtto} throws on a malformed string: call it only on values that went through
 * {@link Decimal} or {@link Price}. Converting to a JSON number ({@link toNumber}) is for
 * display only (`usage.cost`); it rounds to the nearest double.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

const ATTO_DIGITS = 18
const ATTO = 10n ** 18n

/**
 * A non-negative decimal USD amount as a string, at most 18 fractional digits
 * (`"0"`, `"0.02"`, `"1.5"`).
 *
 * @since 0.1.0
 */
export const Decimal = Schema.String.check(
  Schema.isPattern(/^(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})?$/u, {
    expected: "a non-negative decimal string such as \"0.02\" (at most 18 digits after the point)"
  })
)

/**
 * A catalog price: a non-negative decimal USD string with at most 12 fractional digits, so
 * that per-token costs stay exact.
 *
 * @since 0.1.0
 */
export const Price = Schema.String.check(
  Schema.isPattern(/^(0|[1-9][0-9]{0,11})(\.[0-9]{1,12})?$/u, {
    expected: "a non-negative decimal string such as \"0.02\" (at most 12 digits after the point)"
  })
)

/**
 * Parses a validated decimal string into atto-dollars.
 *
 * **Gotchas**
 *
 * Throws a `RangeError` on anything {@link Decimal} rejects.
 *
 * @since 0.1.0
 */
export const toAtto = (decimal: string): bigint => {
  const match = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,18}))?$/u.exec(decimal)
  if (match === null) throw new RangeError(`not a decimal amount: ${JSON.stringify(decimal)}`)
  const whole = BigInt(match[1]!)
  const fraction = (match[2] ?? "").padEnd(ATTO_DIGITS, "0")
  return whole * ATTO + BigInt(fraction)
}

/**
 * Formats atto-dollars as the shortest exact decimal string (`"0.00000014"`, `"0"`).
 *
 * @since 0.1.0
 */
export const toDecimal = (atto: bigint): string => {
  const negative = atto < 0n
  const abs = negative ? -atto : atto
  const whole = abs / ATTO
  const fraction = (abs % ATTO).toString().padStart(ATTO_DIGITS, "0").replace(/0+$/u, "")
  return `${negative ? "-" : ""}${whole}${fraction === "" ? "" : `.${fraction}`}`
}

/**
 * Converts atto-dollars to the nearest JSON number, for `usage.cost` and other displays.
 *
 * @since 0.1.0
 */
export const toNumber = (atto: bigint): number => Number(toDecimal(atto))

/**
 * How {@link toUnits} rounds a remainder.
 *
 * @since 0.1.0
 */
export type Rounding = "up" | "down" | "half-even"

/**
 * Converts atto-dollars to whole units of 10^-digits USD (`digits` 6 = micro-dollars,
 * 9 = nano-dollars), rounding as asked. Negative amounts are not expected and throw.
 *
 * **When to use**
 *
 * When a ledger keeps a coarser integer unit than the exact cost. Rounding `"up"` never
 * undercharges; `"half-even"` is unbiased over many requests.
 *
 * @since 0.1.0
 */
export const toUnits = (atto: bigint, digits: number, rounding: Rounding): bigint => {
  if (atto < 0n) throw new RangeError("negative amount")
  if (!Number.isInteger(digits) || digits < 0 || digits > ATTO_DIGITS) throw new RangeError(`bad digits: ${digits}`)
  const divisor = 10n ** BigInt(ATTO_DIGITS - digits)
  const quotient = atto / divisor
  const remainder = atto % divisor
  if (remainder === 0n) return quotient
  switch (rounding) {
    case "down":
      return quotient
    case "up":
      return quotient + 1n
    case "half-even": {
      const twice = remainder * 2n
      if (twice > divisor) return quotient + 1n
      if (twice < divisor) return quotient
      return quotient % 2n === 0n ? quotient : quotient + 1n
    }
  }
}

/**
 * Compares two decimal strings exactly: negative when `a < b`, zero when equal, positive when
 * `a > b`.
 *
 * @since 0.1.0
 */
export const compare = (a: string, b: string): number => {
  const x = toAtto(a)
  const y = toAtto(b)
  return x < y ? -1 : x > y ? 1 : 0
}
