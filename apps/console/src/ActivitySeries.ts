import type { ActivityItem } from "@switchyard/core/schema/Activity"

/**
 * One chart's rows: a row per UTC day, one numeric column per series, every day of the range
 * present (a day without traffic is a row of zeros, so gaps read as quiet days, not as missing).
 */
export interface DailySeries {
  readonly data: ReadonlyArray<Record<string, string | number>>
  readonly series: ReadonlyArray<string>
}

export type Measure = "usage" | "requests" | "prompt_tokens"

const dayMs = 86_400_000

/**
 * The `days` UTC days ending with `today` (YYYY-MM-DD), oldest first.
 */
export const dayRange = (today: string, days: number): ReadonlyArray<string> => {
  const end = Date.parse(`${today}T00:00:00Z`)
  return Array.from({ length: days }, (_, i) => new Date(end - (days - 1 - i) * dayMs).toISOString().slice(0, 10))
}

/**
 * The most significant `keep` series by total; the rest are summed into "other".
 */
const topSeries = (totals: Map<string, number>, keep: number): { readonly kept: ReadonlyArray<string>; readonly other: boolean } => {
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([name]) => name)
  return ranked.length <= keep ? { kept: ranked, other: false } : { kept: ranked.slice(0, keep - 1), other: true }
}

/**
 * `measure` per day over `days`, split by `groupOf` (the model, the provider, a key...), with at
 * most `keep` series.
 */
export const byDay = (
  rows: ReadonlyArray<ActivityItem>,
  options: {
    readonly today: string
    readonly days: number
    readonly measure: Measure
    readonly groupOf: (row: ActivityItem) => string
    readonly keep?: number
  }
): DailySeries => {
  const days = dayRange(options.today, options.days)
  const inRange = new Set(days)
  const totals = new Map<string, number>()
  for (const row of rows) {
    if (!inRange.has(row.date)) continue
    const group = options.groupOf(row)
    totals.set(group, (totals.get(group) ?? 0) + row[options.measure])
  }
  const { kept, other } = topSeries(totals, options.keep ?? 6)
  const series = other ? [...kept, "other"] : kept
  const keptSet = new Set(kept)
  const byDate = new Map(days.map((date) => [date, Object.fromEntries([["date", date], ...series.map((s) => [s, 0])]) as Record<string, string | number>]))
  for (const row of rows) {
    const record = byDate.get(row.date)
    if (record === undefined) continue
    const group = options.groupOf(row)
    const name = keptSet.has(group) ? group : "other"
    record[name] = (record[name] as number) + row[options.measure]
  }
  return { data: days.map((date) => byDate.get(date)!), series }
}

/**
 * The sum of `measure` over the rows whose day is in [from, to].
 */
export const total = (rows: ReadonlyArray<ActivityItem>, measure: Measure, from = "", to = "9999-12-31"): number =>
  rows.reduce((sum, row) => (row.date >= from && row.date <= to ? sum + row[measure] : sum), 0)
