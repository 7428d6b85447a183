/**
 * The UTC windows that key usage and key limits are counted in.
 *
 * **Details**
 *
 * A day starts at midnight UTC, a week on Monday at midnight UTC (Monday to Sunday), a month on
 * the first at midnight UTC. `limit_reset` picks the window a key's limit is counted in; a key
 * without a reset counts everything it ever spent.
 *
 * @since 0.1.0
 */


/**
 * The start of each window that contains `now`.
 *
 * @since 0.1.0
 */
export interface WindowStarts {
  readonly day: Date
  readonly week: Date
  readonly month: Date
}

/**
 * @since 0.1.0
 */
export const startsAt = (now: Date): WindowStarts => {
  const y = now.getUTCFullYear()
  const m = now.getUTCMonth()
  const d = now.getUTCDate()
  const day = new Date(Date.UTC(y, m, d))
  const sinceMonday = (now.getUTCDay() + 6) % 7
  return {
    day,
    week: new Date(Date.UTC(y, m, d - sinceMonday)),
    month: new Date(Date.UTC(y, m, 1))
  }
}

/**
 * Exact money: credits (USD) are kept as integer nano-dollars and turned into a JSON number
 * only at the edge.
 *
 * @since 0.1.0
 */
const nanosPerCredit = 1_000_000_000n

/**
 * @since 0.1.0
 */
export const creditsFromNanos = (nanos: bigint): number => {
  const abs = nanos < 0n ? -nanos : nanos
  return Number(`${nanos < 0n ? "-" : ""}${abs / nanosPerCredit}.${(abs % nanosPerCredit).toString().padStart(9, "0")}`)
}

/**
 * Parses a decimal credit amount (a JSON number or a decimal string) into nano-dollars, exactly;
 * `undefined` when it is not a finite decimal with at most nine fractional digits.
 *
 * @since 0.1.0
 */
export const nanosFromCredits = (value: number | string): bigint | undefined => {
  const text = typeof value === "number" ? (Number.isFinite(value) ? numberToPlain(value) : "") : value.trim()
  const match = /^(-?)(\d+)(?:\.(\d{1,9})\d*)?$/u.exec(text)
  if (match === null) return undefined
  const [, sign, whole, frac = ""] = match
  const nanos = BigInt(whole!) * nanosPerCredit + BigInt(frac.padEnd(9, "0"))
  return sign === "-" ? -nanos : nanos
}

const numberToPlain = (n: number): string =>
  Math.abs(n) < 1e21 ? n.toLocaleString("en-US", { useGrouping: false, maximumFractionDigits: 20 }) : ""
