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

/**
 * A finite number below 1e21 as plain decimal digits (no exponent), rounded half to even at 20
 * fractional digits; `""` above. Written out from the shortest round-trip form rather than with
 * `toLocaleString`, whose number formatting loads ICU's locale data (megabytes of the Node binary
 * resident for good) into a process that otherwise never needs it.
 */
const numberToPlain = (n: number): string => {
  if (!(Math.abs(n) < 1e21)) return ""
  const [mantissa, exponentText] = Math.abs(n).toString().split("e") as [string, string | undefined]
  const [whole, frac = ""] = mantissa.split(".") as [string, string | undefined]
  // The number is `digits` × 10^(-scale).
  let digits = whole + frac
  let scale = frac.length - Number(exponentText ?? 0)
  if (scale < 0) {
    digits += "0".repeat(-scale)
    scale = 0
  }
  if (scale > 20) {
    const cut = digits.length - (scale - 20)
    const kept = cut > 0 ? BigInt(digits.slice(0, cut)) : 0n
    const rest = cut > 0 ? digits.slice(cut) : digits.padStart(scale - 20, "0")
    const half = `5${"0".repeat(rest.length - 1)}`
    const up = rest > half || (rest === half && kept % 2n === 1n)
    digits = (kept + (up ? 1n : 0n)).toString()
    scale = 20
  }
  const padded = digits.padStart(scale + 1, "0")
  const intPart = padded.slice(0, padded.length - scale).replace(/^0+(?=\d)/u, "")
  const fracPart = padded.slice(padded.length - scale).replace(/0+$/u, "")
  const text = fracPart === "" ? intPart : `${intPart}.${fracPart}`
  return n < 0 && /[1-9]/u.test(text) ? `-${text}` : text
}
