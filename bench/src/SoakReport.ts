/**
 * What a soak or a series of rounds measured, period by period (a minute of a soak, a round), and
 * the summaries the issue's bars are read from: first against last period, RSS growth at the end,
 * the data directory's growth per request, a seeded ledger against an empty one.
 */
export interface Period {
  /** 1-based. */
  readonly index: number
  /** Wall seconds the period's load ran. */
  readonly seconds: number
  /** Successful answers in the whole period. */
  readonly requests: number
  /** Successful answers per second after the period's ramp (see Load.ts). */
  readonly rps: number
  readonly p50: number
  readonly failures: number
  /** CPU milliseconds the gateway process used in the period. */
  readonly gatewayCpuMs: number
  /** CPU milliseconds of the PostgreSQL processes working for the gateway's database (PostgreSQL only). */
  readonly databaseCpuMs: number | undefined
  /** The gateway's RSS at the end of the period, MB. */
  readonly rssMb: number
  /** The data directory (SQLite: the file and its WAL) or the database (PostgreSQL) at the end of the period, bytes. */
  readonly dataBytes: number
}

export interface Series {
  readonly store: "sqlite" | "postgres"
  /** Ledger rows seeded before the load (0: none). */
  readonly seededRows: number
  readonly seedMs: number | undefined
  /** The gateway's RSS and the data's size once started and before the first period. */
  readonly startRssMb: number
  readonly startDataBytes: number
  readonly periods: ReadonlyArray<Period>
}

export const storeLabel = (store: Series["store"]) => store === "sqlite" ? "SQLite" : "PostgreSQL"

/** Gateway CPU ms per request in the period. */
const gatewayCpuPerRequest = (p: Period): number => p.requests === 0 ? Number.NaN : p.gatewayCpuMs / p.requests

/** CPU ms per request counted against the issue's bars: the gateway, plus the database server on PostgreSQL. */
const cpuPerRequest = (p: Period): number =>
  p.requests === 0 ? Number.NaN : (p.gatewayCpuMs + (p.databaseCpuMs ?? 0)) / p.requests

export interface Summary {
  readonly cpuRatio: number
  readonly rpsRatio: number
  /** RSS at the end less RSS at the window's start, MB, and the window's length in seconds. */
  readonly rssGrowthMb: number
  readonly rssWindowSeconds: number
  /** Growth of the data per million successful requests over the whole load, bytes. */
  readonly dataBytesPerMillion: number
  readonly requests: number
}

/**
 * First against last period; RSS growth over the last 10 minutes when the load ran 30 minutes or
 * more, else over its last third (at least one period).
 */
export const summarise = (series: Series): Summary | undefined => {
  const periods = series.periods
  if (periods.length === 0) return undefined
  const first = periods[0]!
  const last = periods[periods.length - 1]!
  const total = periods.reduce((s, p) => s + p.seconds, 0)
  const requests = periods.reduce((n, p) => n + p.requests, 0)
  // Periods from the end until the window's length is reached.
  const windowTarget = total >= 1800 ? 600 : total / 3
  let windowSeconds = 0
  let start = periods.length
  while (start > 0 && (windowSeconds < windowTarget - 1e-9 || start === periods.length)) {
    start--
    windowSeconds += periods[start]!.seconds
  }
  const rssBefore = start === 0 ? series.startRssMb : periods[start - 1]!.rssMb
  return {
    cpuRatio: cpuPerRequest(last) / cpuPerRequest(first),
    rpsRatio: last.rps / first.rps,
    rssGrowthMb: last.rssMb - rssBefore,
    rssWindowSeconds: windowSeconds,
    dataBytesPerMillion: requests === 0 ? Number.NaN : ((last.dataBytes - series.startDataBytes) / requests) * 1e6,
    requests
  }
}

export interface Bar {
  readonly text: string
  readonly value: number
  readonly limit: number
  readonly direction: "max" | "min"
  readonly holds: boolean | undefined
  /** Why a measured value is not judged. */
  readonly note?: string
}

const bar = (text: string, value: number, limit: number, direction: "max" | "min"): Bar => ({
  text,
  value,
  limit,
  direction,
  holds: Number.isFinite(value) ? (direction === "max" ? value <= limit : value >= limit) : undefined
})

/** The issue's bars for rounds from an empty store: last round's CPU/req ≤ 1.15× the first's, req/s ≥ 0.85×. */
export const roundBars = (summary: Summary): ReadonlyArray<Bar> => [
  bar("last round's CPU per request ÷ the first's", summary.cpuRatio, 1.15, "max"),
  bar("last round's req/s ÷ the first's", summary.rpsRatio, 0.85, "min")
]

/**
 * The issue's bar for a 30-minute soak: RSS grows by ≤ 10 MB over its last 10 minutes. A shorter
 * run's growth is shown, not judged (its last third still holds the warm-up's growth).
 */
export const soakBars = (summary: Summary): ReadonlyArray<Bar> => {
  const growth = bar(`RSS growth over the last ${(summary.rssWindowSeconds / 60).toFixed(0)} min, MB`, summary.rssGrowthMb, 10, "max")
  return [summary.rssWindowSeconds >= 600 ? growth : { ...growth, holds: undefined, note: "not judged: the bar is for the last 10 minutes of a 30-minute soak" }]
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export interface Comparison {
  readonly cpuRatio: number
  readonly rpsRatio: number
  readonly bars: ReadonlyArray<Bar>
}

/** A seeded ledger against an empty one, on medians over the periods: within 10 % on CPU/req and req/s. */
export const compare = (seeded: Series, empty: Series): Comparison => {
  const cpuRatio = median(seeded.periods.map(cpuPerRequest)) / median(empty.periods.map(cpuPerRequest))
  const rpsRatio = median(seeded.periods.map((p) => p.rps)) / median(empty.periods.map((p) => p.rps))
  return {
    cpuRatio,
    rpsRatio,
    bars: [
      bar(`CPU per request, ${seeded.seededRows.toLocaleString("en")}-row ledger ÷ empty (medians)`, cpuRatio, 1.1, "max"),
      bar(`req/s, ${seeded.seededRows.toLocaleString("en")}-row ledger ÷ empty (medians)`, rpsRatio, 0.9, "min")
    ]
  }
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
const fixed = (x: number | undefined, digits: number) => x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(digits)

/** One line per period, as printed while the load runs. */
export const periodLine = (series: Pick<Series, "store">, p: Period, unit: string): string => {
  const db = p.databaseCpuMs === undefined ? "" : `, gateway+postgres ${fixed(cpuPerRequest(p), 3)} ms/req`
  return `${storeLabel(series.store)} ${unit} ${p.index}: ${Math.round(p.rps)} req/s, gateway ${fixed(gatewayCpuPerRequest(p), 3)} ms/req${db}, RSS ${
    p.rssMb.toFixed(0)
  } MB, data ${mb(p.dataBytes)} MB${p.failures > 0 ? `, ${p.failures} failed` : ""}`
}

export const barsTable = (bars: ReadonlyArray<Bar>): ReadonlyArray<string> => [
  "| bar | measured | limit | result |",
  "|---|---|---|---|",
  ...bars.map((b) =>
    `| ${b.text} | ${fixed(b.value, 3)} | ${b.direction === "max" ? "≤" : "≥"} ${b.limit} | ${
      b.holds === undefined ? b.note ?? "not measured" : b.holds ? "met" : "**missed**"
    } |`
  )
]

/** The Markdown of one series: its periods, then its summary and the bars that apply. */
export const markdown = (series: Series, kind: "soak" | "rounds"): string => {
  const unit = kind === "soak" ? "minute" : "round"
  const pg = series.store === "postgres"
  const summary = summarise(series)
  const lines = [
    `### ${storeLabel(series.store)}, ${series.seededRows > 0 ? `${series.seededRows.toLocaleString("en")} ledger rows seeded` : "empty store"}`,
    "",
    ...(series.seedMs !== undefined ? [`Seeded in ${(series.seedMs / 1000).toFixed(1)} s.`, ""] : []),
    `Start: RSS ${series.startRssMb.toFixed(0)} MB, data ${mb(series.startDataBytes)} MB.`,
    "",
    `| ${unit} | req/s | p50 ms | gateway CPU ms/req |${pg ? " gateway + postgres CPU ms/req |" : ""} RSS MB | data MB | failures |`,
    `|---|---|---|---|${pg ? "---|" : ""}---|---|---|`,
    ...series.periods.map((p) =>
      `| ${p.index} | ${Math.round(p.rps)} | ${fixed(p.p50, 2)} | ${fixed(gatewayCpuPerRequest(p), 3)} |${pg ? ` ${fixed(cpuPerRequest(p), 3)} |` : ""} ${
        p.rssMb.toFixed(0)
      } | ${mb(p.dataBytes)} | ${p.failures} |`
    )
  ]
  if (summary !== undefined) {
    lines.push(
      "",
      `${summary.requests.toLocaleString("en")} requests; ${unit} ${series.periods.length} ÷ ${unit} 1: CPU/req ${fixed(summary.cpuRatio, 3)}×, req/s ${
        fixed(summary.rpsRatio, 3)
      }×; RSS ${summary.rssGrowthMb >= 0 ? "+" : ""}${summary.rssGrowthMb.toFixed(1)} MB over the last ${
        (summary.rssWindowSeconds / 60).toFixed(1)
      } min; data ${mb(summary.dataBytesPerMillion)} MB per million requests.`,
      "",
      ...barsTable(kind === "rounds" ? roundBars(summary) : soakBars(summary))
    )
  }
  return lines.join("\n")
}
