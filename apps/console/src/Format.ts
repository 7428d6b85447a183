/**
 * How the console writes money, counts, times and durations.
 */
const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 })
const count = new Intl.NumberFormat("en-US")

// Amounts below a millionth of a dollar (a cheap embedding costs 6e-8) keep their first
// significant digits instead of rounding to $0.00.
const tinyUsd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumSignificantDigits: 3 })

/** USD at the precision the amount has: never `$0.00` for an amount that is not zero. */
export const money = (credits: number | null | undefined): string =>
  credits === null || credits === undefined
    ? "-"
    : credits !== 0 && Math.abs(credits) < 0.000001
    ? tinyUsd.format(credits)
    : usd.format(credits)

export const integer = (n: number | null | undefined): string =>
  n === null || n === undefined ? "-" : count.format(n)

export const dateTime = (iso: string | null | undefined): string =>
  iso === null || iso === undefined ? "-" : `${iso.slice(0, 16).replace("T", " ")}Z`

export const percent = (ratio: number | null | undefined): string =>
  ratio === null || ratio === undefined || !Number.isFinite(ratio) ? "-" : `${(ratio * 100).toFixed(ratio < 0.1 ? 2 : 1)} %`

export const millis = (ms: number | null | undefined): string =>
  ms === null || ms === undefined || !Number.isFinite(ms) ? "-" : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`

/**
 * A per-token USD price (as the model and endpoint listings give it) per million tokens, exact.
 */
export const perMillion = (perToken: string): string => {
  const [int = "0", frac = ""] = perToken.trim().split(".")
  const padded = frac.padEnd(6, "0")
  const whole = `${int}${padded.slice(0, 6)}`.replace(/^0+(?=\d)/u, "")
  const rest = padded.slice(6).replace(/0+$/u, "")
  return rest === "" ? whole : `${whole}.${rest}`
}

/**
 * Axis labels: every tick with the same decimals (the axis step's), so labels are evenly rounded.
 */
export const moneyTick = (decimals: number): (value: number) => string => {
  const format = new Intl.NumberFormat("en-US", {
    style: "currency",
    currency: "USD",
    minimumFractionDigits: Math.max(2, decimals),
    maximumFractionDigits: Math.max(2, decimals)
  })
  return (value) => format.format(value)
}

export const countTick = (decimals: number): (value: number) => string => {
  const format = new Intl.NumberFormat("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals })
  return (value) => format.format(value)
}
