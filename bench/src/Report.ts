import * as QuantizerRecall from "./QuantizerRecall.ts"
import type { CellId, TargetId } from "./Cells.ts"
import { accessLogCell, cachedCells, targetLabel, targetLabels, workersCell } from "./Cells.ts"
import type { LoadResult } from "./Load.ts"

/**
 * Summaries of the runs (medians with min–max over the runs of a cell), the issue's targets
 * checked against them, and the Markdown and JSON written from them.
 */
export interface Sample extends LoadResult {
  readonly cell: CellId
  readonly target: TargetId
  readonly run: number
  /** CPU time the target's process used during the run, per successful request; none for `direct`. */
  readonly cpuMsPerRequest: number | undefined
  /** SQL statements the target's store ran during the run, per successful request (Switchyard only, from its /metrics). */
  readonly statementsPerRequest?: number | undefined
}

export interface Spread {
  readonly median: number
  readonly min: number
  readonly max: number
}

export interface TargetSummary {
  readonly target: TargetId
  readonly runs: number
  readonly rps: Spread
  readonly p50: Spread
  readonly p90: Spread
  readonly p99: Spread
  readonly addedP50: Spread | undefined
  readonly vsFloor: Spread | undefined
  readonly vsPeer: Spread | undefined
  readonly cpuMsPerRequest: Spread | undefined
  readonly statementsPerRequest?: Spread | undefined
  readonly peakRssMb: number | undefined
  readonly failures: number
}

export interface CellSummary {
  readonly cell: CellId
  readonly label: string
  readonly connections: number
  readonly targets: ReadonlyArray<TargetSummary>
  readonly skipped: ReadonlyArray<{ readonly target: TargetId; readonly reason: string }>
}

export interface Check {
  readonly id: string
  readonly text: string
  readonly value: number | undefined
  readonly limit: number
  readonly direction: "max" | "min"
  readonly holds: boolean | undefined
  readonly note?: string
}

export interface Report {
  readonly startedAt: string
  readonly finishedAt: string
  readonly command: string
  readonly mode: "quick" | "full" | "custom"
  readonly settings: { readonly seconds: number; readonly runs: number; readonly warmupSeconds: number }
  readonly machine: {
    readonly cpus: number
    readonly cpuModel: string
    readonly node: string
    readonly loadAverageAtStart: ReadonlyArray<number>
    readonly peakRssPerCell: boolean
  }
  readonly cells: ReadonlyArray<CellSummary>
  /** The earlier commit run as `switchyard-old` (`--old-server REF`). */
  readonly oldServer?: { readonly ref: string; readonly commit: string }
  /** Each Switchyard process's RSS once started and idle, before any load, in MB. */
  readonly idleRssMb?: Partial<Record<TargetId, number>>
  /** How long the processes stayed idle after going quiet before that RSS was read, in seconds. */
  readonly idleWaitSeconds?: number
  /** Each timed run of `switchyard --help` from the installed CLI bundle, in ms (none with `--no-cli`). */
  readonly cliHelpMs?: ReadonlyArray<number>
  /** Issue 60's quantizer figure: top-10 neighbours kept by the gateway's int8 and binary vectors. */
  readonly quantizer?: QuantizerRecall.Recall
  readonly checks: ReadonlyArray<Check>
  readonly samples: ReadonlyArray<Sample>
}

const spread = (values: ReadonlyArray<number>): Spread | undefined => {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (finite.length === 0) return undefined
  const mid = finite.length >> 1
  const median = finite.length % 2 === 1 ? finite[mid]! : (finite[mid - 1]! + finite[mid]!) / 2
  return { median, min: finite[0]!, max: finite[finite.length - 1]! }
}

const pairwise = (
  samples: ReadonlyArray<Sample>,
  target: TargetId,
  other: TargetId,
  f: (mine: Sample, theirs: Sample) => number
): Spread | undefined => {
  const theirs = new Map(samples.filter((s) => s.target === other).map((s) => [s.run, s]))
  return spread(samples.filter((s) => s.target === target).flatMap((s) => {
    const match = theirs.get(s.run)
    return match === undefined ? [] : [f(s, match)]
  }))
}

const nan: Spread = { median: Number.NaN, min: Number.NaN, max: Number.NaN }

export const summarise = (
  cell: { readonly id: CellId; readonly label: string; readonly connections: number },
  targets: ReadonlyArray<TargetId>,
  samples: ReadonlyArray<Sample>,
  peaks: Partial<Record<TargetId, number>>,
  skipped: ReadonlyArray<{ readonly target: TargetId; readonly reason: string }>
): CellSummary => ({
  cell: cell.id,
  label: cell.label,
  connections: cell.connections,
  skipped,
  targets: targets.map((target): TargetSummary => {
    const mine = samples.filter((s) => s.target === target)
    const peak = peaks[target]
    return {
      target,
      runs: mine.length,
      rps: spread(mine.map((s) => s.rps)) ?? nan,
      p50: spread(mine.map((s) => s.p50)) ?? nan,
      p90: spread(mine.map((s) => s.p90)) ?? nan,
      p99: spread(mine.map((s) => s.p99)) ?? nan,
      addedP50: target === "direct" ? undefined : pairwise(samples, target, "direct", (a, b) => a.p50 - b.p50),
      vsFloor: target === "floor" || target === "direct" ? undefined : pairwise(samples, target, "floor", (a, b) => a.rps / b.rps),
      vsPeer: target === "peer" || target === "direct" ? undefined : pairwise(samples, target, "peer", (a, b) => a.rps / b.rps),
      cpuMsPerRequest: spread(mine.flatMap((s) => s.cpuMsPerRequest === undefined ? [] : [s.cpuMsPerRequest])),
      statementsPerRequest: spread(mine.flatMap((s) => s.statementsPerRequest === undefined ? [] : [s.statementsPerRequest])),
      peakRssMb: peak === undefined ? undefined : peak / (1024 * 1024),
      failures: mine.reduce((n, s) => n + s.non2xx + s.errors + s.timeouts, 0)
    }
  })
})

const find = (cells: ReadonlyArray<CellSummary>, cell: CellId, target: TargetId) =>
  cells.find((c) => c.cell === cell)?.targets.find((t) => t.target === target)

const check = (
  id: string,
  text: string,
  value: number | undefined,
  limit: number,
  direction: "max" | "min",
  note?: string
): Check => ({
  id,
  text,
  value: value !== undefined && Number.isFinite(value) ? value : undefined,
  limit,
  direction,
  holds: value === undefined || !Number.isFinite(value) ? undefined : direction === "max" ? value <= limit : value >= limit,
  ...(note !== undefined ? { note } : {})
})

/** The bars of one Switchyard target (SQLite, PostgreSQL, the old build) against the floor and the peer in this run. */
const targetChecks = (
  cells: ReadonlyArray<CellSummary>,
  idleRssMb: Partial<Record<TargetId, number>>,
  target: "switchyard" | "switchyard-pg" | "switchyard-old"
): ReadonlyArray<Check> => {
  const out: Array<Check> = []
  const label = target === "switchyard" ? "SQLite" : target === "switchyard-pg" ? "PostgreSQL" : "old build"
  const sy = find(cells, "small-c1", target)?.addedP50?.median
  const floor = find(cells, "small-c1", "floor")?.addedP50?.median
  if (sy !== undefined) {
    out.push(check(
      `small-c1-added-p50-${target}`,
      `small c=1 (${label}): Switchyard's added p50 ÷ the floor's added p50`,
      floor !== undefined && floor > 0 ? sy / floor : undefined,
      3,
      "max",
      floor !== undefined ? `${ms(sy)} ms vs ${ms(floor)} ms over direct` : undefined
    ))
  }
  const bars: ReadonlyArray<readonly [CellId, "vsFloor" | "vsPeer", number]> = [
    ["small-c16", "vsFloor", 0.25],
    ["small-c16", "vsPeer", 3],
    ["large-c16", "vsFloor", 0.6]
  ]
  for (const [cell, against, limit] of bars) {
    const summary = find(cells, cell, target)
    if (summary === undefined) continue
    out.push(check(
      `${cell}-${against}-${target}`,
      `${cell} (${label}): Switchyard req/s ÷ the ${against === "vsFloor" ? "floor's" : "peer's"}`,
      summary[against]?.median,
      limit,
      "min"
    ))
  }
  const cpu = find(cells, "small-c16", target)?.cpuMsPerRequest?.median
  const floorCpu = find(cells, "small-c16", "floor")?.cpuMsPerRequest?.median
  if (cpu !== undefined) {
    out.push(check(
      `small-c16-cpu-${target}`,
      `small-c16 (${label}): Switchyard CPU per request ÷ the floor's`,
      floorCpu !== undefined && floorCpu > 0 ? cpu / floorCpu : undefined,
      4,
      "max",
      floorCpu !== undefined ? `${cpu.toFixed(3)} ms vs ${floorCpu.toFixed(3)} ms` : undefined
    ))
  }
  // Issue 36's bars: against the stack's own floor (a minimal Effect 4 gateway) and the peer.
  const effectFloorCpu = find(cells, "small-c16", "effect-floor")?.cpuMsPerRequest?.median
  const peerCpu = find(cells, "small-c16", "peer")?.cpuMsPerRequest?.median
  if (cpu !== undefined && effectFloorCpu !== undefined && effectFloorCpu > 0) {
    out.push(check(
      `small-c16-cpu-effect-floor-${target}`,
      `small-c16 (${label}): Switchyard CPU per request ÷ the minimal Effect gateway's`,
      cpu / effectFloorCpu,
      1.5,
      "max",
      `${cpu.toFixed(3)} ms vs ${effectFloorCpu.toFixed(3)} ms`
    ))
  }
  if (cpu !== undefined && peerCpu !== undefined && peerCpu > 0) {
    out.push(check(
      `small-c16-cpu-peer-${target}`,
      `small-c16 (${label}): Switchyard CPU per request ÷ the peer's`,
      cpu / peerCpu,
      0.6,
      "max",
      `${cpu.toFixed(3)} ms vs ${peerCpu.toFixed(3)} ms`
    ))
  }
  const idle = idleRssMb[target]
  if (idle !== undefined) out.push(check(`idle-rss-${target}`, `Switchyard (${label}) RSS idle after start, MB`, idle, 200, "max"))
  // Issue 36's bar for the embedded default: a small container's share.
  if (idle !== undefined && target === "switchyard") {
    out.push(check(`idle-rss-36-${target}`, `Switchyard (${label}) RSS idle after start, MB (issue 36)`, idle, 100, "max"))
  }
  const peakOf = (t: TargetId) => {
    const peaks = cells.flatMap((c) => c.targets.filter((s) => s.target === t).flatMap((s) => s.peakRssMb === undefined ? [] : [s.peakRssMb]))
    return peaks.length === 0 ? undefined : Math.max(...peaks)
  }
  const peak = peakOf(target)
  const floorPeak = peakOf("floor")
  if (peak !== undefined && idle !== undefined) {
    out.push(check(
      `rss-growth-${target}`,
      `Switchyard (${label}) RSS growth under load (highest peak − idle) ÷ the floor's highest peak`,
      floorPeak !== undefined && floorPeak > 0 ? (peak - idle) / floorPeak : undefined,
      2,
      "max",
      floorPeak !== undefined ? `${(peak - idle).toFixed(0)} MB (peak ${peak.toFixed(0)} − idle ${idle.toFixed(0)}) vs ${floorPeak.toFixed(0)} MB` : undefined
    ))
  }
  return out
}

/** The store's statements per request, SQLite's CPU against PostgreSQL's, and the default against the old build. */
const storeChecks = (cells: ReadonlyArray<CellSummary>, idleRssMb: Partial<Record<TargetId, number>>): ReadonlyArray<Check> => {
  const out: Array<Check> = []
  for (const target of ["switchyard", "switchyard-pg"] as const) {
    const statements = find(cells, "small-c16", target)?.statementsPerRequest
    if (statements === undefined) continue
    out.push(check(
      `small-c16-store-statements-${target}`,
      `small-c16 (${target === "switchyard" ? "SQLite" : "PostgreSQL"}, priced): store statements per answered request, from /metrics`,
      statements.median,
      0.1,
      "max",
      `runs ${statements.min.toFixed(3)}–${statements.max.toFixed(3)}`
    ))
  }
  const cpuOn = (target: TargetId) => find(cells, "small-c16", target)?.cpuMsPerRequest?.median
  const sqlite = cpuOn("switchyard")
  const postgres = cpuOn("switchyard-pg")
  if (sqlite !== undefined && postgres !== undefined) {
    out.push(check(
      "small-c16-sqlite-vs-postgres-cpu",
      "small-c16 (priced): Switchyard's CPU ms/req on SQLite ÷ on PostgreSQL (the PostgreSQL server's own CPU not counted)",
      sqlite / postgres,
      1.2,
      "max",
      `${sqlite.toFixed(3)} vs ${postgres.toFixed(3)} ms/req`
    ))
  }
  // Issue 36's before/after: the default against the earlier build (`--old-server REF`) in this run.
  const old = cpuOn("switchyard-old")
  if (sqlite !== undefined && old !== undefined && old > 0) {
    out.push(check(
      "small-c16-cpu-vs-old-build",
      "small-c16 (priced): Switchyard's CPU ms/req on the default ÷ the old build's",
      sqlite / old,
      1,
      "max",
      `${sqlite.toFixed(3)} vs ${old.toFixed(3)} ms/req`
    ))
  }
  const idleNew = idleRssMb.switchyard
  const idleOld = idleRssMb["switchyard-old"]
  if (idleNew !== undefined && idleOld !== undefined && idleOld > 0) {
    out.push(check(
      "idle-rss-vs-old-build",
      "Switchyard's idle RSS on the default ÷ the old build's",
      idleNew / idleOld,
      1,
      "max",
      `${idleNew.toFixed(0)} vs ${idleOld.toFixed(0)} MB`
    ))
  }
  return out
}

/** Ratios of two targets run side by side: the cost of holds, two workers, cache hits. */
const pairedChecks = (samples: ReadonlyArray<Sample>): ReadonlyArray<Check> => {
  const out: Array<Check> = []
  for (const [priced, free, cell] of [["switchyard", "switchyard-free", "small-c16"], ["switchyard-pg", "switchyard-pg-free", "small-c16"]] as const) {
    const ratio = pairwise(samples.filter((s) => s.cell === cell), priced, free, (a, b) => a.rps / b.rps)
    if (ratio === undefined) continue
    out.push(check(
      `${cell}-${priced}-accounting`,
      `${cell}: ${targetLabels[priced]} req/s ÷ zero-priced model's (information: the cost of holds)`,
      ratio.median,
      0.8,
      "min",
      "a zero-priced model skips the hold but still writes its ledger row: this bounds the cost of holds and balance checks, not of the whole ledger"
    ))
  }
  // Issue 36: all cores of one machine on the embedded store (a machine with fewer than 2 cores
  // for the gateway cannot show it; the load generator and the upstream share them too).
  const workers = pairwise(samples.filter((s) => s.cell === workersCell), "switchyard-workers", "switchyard", (a, b) => a.rps / b.rps)
  if (workers !== undefined) {
    out.push(check(
      `${workersCell}-workers-2`,
      `${workersCell} (SQLite): Switchyard req/s with \`SWITCHYARD_WORKERS=2\` ÷ one worker's, the same run (issue 36)`,
      workers.median,
      1.5,
      "min",
      `runs ${workers.min.toFixed(2)}–${workers.max.toFixed(2)}; CPU ms/req is the primary's and both workers' together`
    ))
  }
  for (const cell of cachedCells) {
    const ratio = pairwise(samples.filter((s) => s.cell === cell), "switchyard-cached", "switchyard", (a, b) => a.rps / b.rps)
    if (ratio === undefined) continue
    out.push(check(
      `${cell}-cache-hits`,
      `${cell}: Switchyard req/s with every item cached ÷ the same requests going upstream (SQLite, cache bypassed)`,
      ratio.median,
      2,
      "min"
    ))
  }
  return out
}

/** Issue 47's bars: a lone request against the peer's and the gateway's cost under load, and the access log's cost. */
const loneRequestChecks = (cells: ReadonlyArray<CellSummary>, samples: ReadonlyArray<Sample>): ReadonlyArray<Check> => {
  const out: Array<Check> = []
  // Issue 47: a lone request, against Portkey's in the same run and against the gateway's own
  // cost under load; and what the fsync of its flush costs (the same build, commits synced at
  // checkpoints: information, the default stays FULL).
  const peerC1 = find(cells, "small-c1", "peer")?.addedP50?.median
  for (const target of ["switchyard", "switchyard-normal"] as const) {
    const added = find(cells, "small-c1", target)?.addedP50?.median
    if (added === undefined || peerC1 === undefined || peerC1 <= 0) continue
    out.push(check(
      `small-c1-added-p50-vs-peer-${target}`,
      `small c=1: ${targetLabels[target]}'s added p50 ÷ Portkey's (issue 47${target === "switchyard" ? "" : ", information"})`,
      added / peerC1,
      1,
      "max",
      `${ms(added)} ms vs ${ms(peerC1)} ms over direct`
    ))
  }
  const cpuC1 = find(cells, "small-c1", "switchyard")?.cpuMsPerRequest?.median
  const cpuC16 = find(cells, "small-c16", "switchyard")?.cpuMsPerRequest?.median
  if (cpuC1 !== undefined && cpuC16 !== undefined && cpuC16 > 0) {
    out.push(check(
      "small-c1-cpu-vs-c16",
      "small (SQLite): Switchyard's CPU per request at c=1 ÷ at c=16 (issue 47)",
      cpuC1 / cpuC16,
      2,
      "max",
      `${cpuC1.toFixed(3)} vs ${cpuC16.toFixed(3)} ms/req`
    ))
  }
  const accessLog = accessLogCost(samples)
  if (accessLog !== undefined) {
    const { cpuPercent, rpsPercent, cpuWith, cpuWithout } = accessLog
    out.push(check(
      `${accessLogCell}-access-log`,
      `${accessLogCell} (SQLite): the access log's cost, % of CPU ms/req, (with − without) ÷ without (off: \`SWITCHYARD_LOG_LEVEL=warn\`)`,
      cpuPercent?.median,
      5,
      "max",
      [
        cpuWith === undefined || cpuWithout === undefined
          ? undefined
          : `CPU ms/req ${cpuWith.toFixed(3)} with, ${cpuWithout.toFixed(3)} without${cpuPercent === undefined ? "" : `, runs ${range(cpuPercent)}`}`,
        `req/s given up ${rpsPercent.median.toFixed(1)} %, runs ${range(rpsPercent)} (information)`
      ].filter((part) => part !== undefined).join("; ")
    ))
  }
  return out
}

/** The installed CLI's `--help` time. */
const cliChecks = (cliHelpMs: ReadonlyArray<number>): ReadonlyArray<Check> => {
  const out: Array<Check> = []
  const help = spread(cliHelpMs)
  if (help !== undefined) {
    out.push(check(
      "cli-help-ms",
      "`switchyard --help` from the installed CLI bundle (`node bin/switchyard.mjs`), median ms",
      help.median,
      500,
      "max",
      `${Math.round(help.min)}–${Math.round(help.max)} ms over ${cliHelpMs.length} runs`
    ))
  }
  return out
}

/**
 * The bars of issue 31 ("the request path, lean"), each a ratio within this one run, for
 * Switchyard on SQLite and (when measured) on PostgreSQL: small c=16 req/s against the floor's
 * and the peer's, small c=16 CPU per request against the floor's, large c=16 req/s against the
 * floor's, the added p50 at c=1 against the floor's, RSS idle after start, and the RSS growth
 * under load (highest peak less idle) against the floor's highest peak; then the store's, the
 * paired targets', issue 47's and the CLI's bars.
 */
/**
 * Issue 60's bars: the gateway's int8 keeps the float top-10, and a width and a type it makes
 * cost little beside the same request in floats.
 */
const vectorChecks = (cells: ReadonlyArray<CellSummary>, quantizer: QuantizerRecall.Recall | undefined): ReadonlyArray<Check> => {
  const out: Array<Check> = []
  if (quantizer !== undefined) {
    out.push(check("quantizer-int8-top10", "int8 made by the gateway: share of the float top-10 neighbours kept", quantizer.int8, 0.95, "min", `binary (Hamming) keeps ${(quantizer.binary * 100).toFixed(1)} %`))
  }
  const vectorCpu = find(cells, "vector-c16", "switchyard")?.cpuMsPerRequest?.median
  const floatCpu = find(cells, "small-c16", "switchyard")?.cpuMsPerRequest?.median
  if (vectorCpu !== undefined && floatCpu !== undefined && floatCpu > 0) {
    out.push(check(
      "vector-c16-cpu-vs-small-c16",
      "vector-c16 (SQLite): CPU per request of 256 dimensions as int8, both made by the gateway, ÷ small-c16's in floats",
      vectorCpu / floatCpu,
      1.1,
      "max",
      `${vectorCpu.toFixed(3)} ms vs ${floatCpu.toFixed(3)} ms`
    ))
  }
  return out
}

export const checks = (
  cells: ReadonlyArray<CellSummary>,
  samples: ReadonlyArray<Sample>,
  idleRssMb: Partial<Record<TargetId, number>> = {},
  cliHelpMs: ReadonlyArray<number> = [],
  quantizer?: QuantizerRecall.Recall
): ReadonlyArray<Check> => [
  ...vectorChecks(cells, quantizer),
  ...(["switchyard", "switchyard-pg", "switchyard-old"] as const).flatMap((target) => targetChecks(cells, idleRssMb, target)),
  ...storeChecks(cells, idleRssMb),
  ...pairedChecks(samples),
  ...loneRequestChecks(cells, samples),
  ...cliChecks(cliHelpMs)
]

const range = (value: Spread) => `${value.min.toFixed(1)} to ${value.max.toFixed(1)} %`

/**
 * The access log's cost in its cell, run by run: the CPU time per request of Switchyard with its
 * access lines (`switchyard`) over the same process without them (`switchyard-quiet`), and the
 * req/s it gives up, both in % of the figure without; medians of CPU ms/req with and without.
 */
export const accessLogCost = (samples: ReadonlyArray<Sample>): {
  readonly cpuPercent: Spread | undefined
  readonly rpsPercent: Spread
  readonly cpuWith: number | undefined
  readonly cpuWithout: number | undefined
} | undefined => {
  const cell = samples.filter((s) => s.cell === accessLogCell)
  const rpsPercent = pairwise(cell, "switchyard", "switchyard-quiet", (on, off) => 100 * (off.rps - on.rps) / off.rps)
  if (rpsPercent === undefined) return undefined
  const cpuPercent = pairwise(
    cell,
    "switchyard",
    "switchyard-quiet",
    (on, off) =>
      on.cpuMsPerRequest === undefined || off.cpuMsPerRequest === undefined
        ? Number.NaN
        : 100 * (on.cpuMsPerRequest - off.cpuMsPerRequest) / off.cpuMsPerRequest
  )
  const cpuOf = (target: TargetId) =>
    spread(cell.filter((s) => s.target === target).flatMap((s) => s.cpuMsPerRequest === undefined ? [] : [s.cpuMsPerRequest]))?.median
  return { cpuPercent, rpsPercent, cpuWith: cpuOf("switchyard"), cpuWithout: cpuOf("switchyard-quiet") }
}

const ms = (value: number | undefined) => value === undefined || !Number.isFinite(value) ? "–" : value < 10 ? value.toFixed(2) : value.toFixed(1)
const ratio = (value: Spread | undefined) =>
  value === undefined || !Number.isFinite(value.median) ? "–" : `${value.median.toFixed(2)} (${value.min.toFixed(2)}–${value.max.toFixed(2)})`
const count = (value: Spread) =>
  !Number.isFinite(value.median) ? "–" : `${Math.round(value.median)} (${Math.round(value.min)}–${Math.round(value.max)})`

const cellTable = (cell: CellSummary, oldRef: string | undefined): string => {
  const rows = cell.targets.map((t) =>
    `| ${targetLabel(t.target, oldRef)} | ${count(t.rps)} | ${ms(t.p50.median)} | ${ms(t.p90.median)} | ${ms(t.p99.median)} | ${
      t.addedP50 === undefined ? "–" : `${ms(t.addedP50.median)} (${ms(t.addedP50.min)}–${ms(t.addedP50.max)})`
    } | ${ratio(t.vsFloor)} | ${ratio(t.vsPeer)} | ${t.cpuMsPerRequest === undefined ? "–" : t.cpuMsPerRequest.median.toFixed(3)} | ${
      t.statementsPerRequest === undefined ? "–" : t.statementsPerRequest.median.toFixed(3)
    } | ${
      t.peakRssMb === undefined ? "–" : t.peakRssMb.toFixed(0)
    } |${t.failures > 0 ? ` ${t.failures} failed |` : ""}`
  )
  const skipped = cell.skipped.map((s) => `\n${targetLabel(s.target, oldRef)} was not measured: ${s.reason}`)
  return [
    `### ${cell.label}`,
    "",
    "| target | req/s (min–max) | p50 ms | p90 ms | p99 ms | p50 added over direct, ms | × floor req/s | × peer req/s | CPU ms/req | store statements/req | peak RSS MB |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
    ...skipped
  ].join("\n")
}

/**
 * A check's value with two decimals, or as many more (up to four) as it takes for the printed
 * figure to fall on the same side of the limit as the verdict (0.7997 against 0.8 prints 0.7997).
 */
export const checkValue = (c: Check): string => {
  if (c.value === undefined) return "–"
  for (let digits = 2; digits < 4; digits++) {
    const shown = Number(c.value.toFixed(digits))
    const shownHolds = c.direction === "max" ? shown <= c.limit : shown >= c.limit
    if (c.holds === undefined || shownHolds === c.holds) return c.value.toFixed(digits)
  }
  return c.value.toFixed(4)
}

const verdict = (c: Check) => c.holds === undefined ? "not measured" : c.holds ? "holds" : "**missed**"

export const checksTable = (items: ReadonlyArray<Check>): string =>
  [
    "| target | measured | limit | result |",
    "|---|---|---|---|",
    ...items.map((c) =>
      `| ${c.text} | ${checkValue(c)}${c.note !== undefined ? ` (${c.note})` : ""} | ${
        c.direction === "max" ? "≤" : "≥"
      } ${c.limit} | ${verdict(c)} |`
    )
  ].join("\n")

export const markdown = (report: Report): string =>
  [
    "# Switchyard benchmark",
    "",
    `Produced by \`${report.command}\` on ${report.finishedAt.slice(0, 10)}: ${report.machine.cpus} × ${report.machine.cpuModel}, Node ${report.machine.node}, load average at start ${
      report.machine.loadAverageAtStart.map((n) => n.toFixed(2)).join(" / ")
    }. Every process (load generator, fake upstream, gateway) shares these cores.`,
    "",
    `Closed loop (autocannon), ${report.settings.runs} run(s) of ${report.settings.seconds} s per target and cell after a ${report.settings.warmupSeconds} s warm-up, targets interleaved; rates and percentiles count the answers completed after each run's ramp (a fifth of it, at most 1 s), since a run starts with nothing in flight; medians with min–max over the runs. Ratios are taken run by run (the same round) and then their median. CPU ms/req is the user + system time of the target's process divided by its successful requests; peak RSS is the process's high-water mark during the cell${
      report.machine.peakRssPerCell ? "" : " (here the lifetime high-water mark: this kernel does not reset it)"
    }.`,
    "",
    `Switchyard runs as an operator runs it (\`pnpm start\`: \`node\` with the start script's flags on the production bundle, built with the server's rolldown config): its idle RSS is read once every process has started, gone quiet and stayed idle ${report.idleWaitSeconds ?? 0} s more. It runs on the embedded store (SQLite, \`<data dir>/switchyard.db\`) in a fresh data directory, serving a priced model from a workspace with credits (every request holds and settles), with \`SWITCHYARD_RATE_LIMIT=999999999/1s\` so the limiter runs without refusing. The workspace has the embeddings cache on, and every Switchyard row but the cached one sends \`x-switchyard-cache: bypass\`, so it goes upstream each time. The zero-priced rows use a model priced 0 on the same process: no hold, but the ledger row is still written. The rows with every item cached send the same priced requests to the same process without that header, after the validation request and the warm-up wrote every item to the cache (validation checks the answer says \`hit\`): no hold and no upstream call, but the ledger row (cost 0) is still written. The row with the access log off is a second Switchyard process, the same in every other way, started with \`SWITCHYARD_LOG_LEVEL=warn\` (access lines are \`info\`; validation checks that it writes none and the other process does); it only runs in ${accessLogCell}. The row with \`SWITCHYARD_WORKERS=2\` is a third Switchyard process, the same as the first but run as a primary and two worker processes on one port and one SQLite file, interleaved with the one-worker process in ${workersCell}; its CPU ms/req and peak RSS are the three processes' summed (its store statements are not counted: each worker's /metrics has only its own). Each Switchyard process logs JSON (\`SWITCHYARD_LOG_FORMAT=json\`) to standard output redirected to a file, as \`node … > switchyard.log\` would: Node writes to a file synchronously, one write(2) into the page cache per line, a real sink that costs about what a drained pipe does. The PostgreSQL rows (only when \`DATABASE_URL\` is set) use a throw-away database on that server; the database server's own CPU is not in CPU ms/req. The floor is a bare node:http pass-through; the peer is \`@portkey-ai/gateway\` 1.15.2 (headless, on 127.0.0.1) sent to the same upstream with its custom-host header. Every answer is first checked to carry exactly the upstream's vectors.`,
    "",
    "## Targets",
    "",
    checksTable(report.checks),
    ...(report.cliHelpMs !== undefined && report.cliHelpMs.length > 0
      ? [
        "",
        "`switchyard --help` is timed from the command's launch to its exit, one run after another, before any other benchmark process starts: the CLI is built by its `build` script (rolldown), laid out as `npm i` installs its packed tarball (`package.json`, `bin`, `dist`; every mtime the same, as `npm pack` writes them, so the launcher picks the bundle), and `bin/switchyard.mjs --help` is run by this Node; each answer must be the help."
      ]
      : []),
    "",
    ...(report.quantizer !== undefined ? ["", ...QuantizerRecall.markdown(report.quantizer)] : []),
    "## Cells",
    "",
    ...(report.oldServer !== undefined
      ? [
        `The old build (${report.oldServer.ref}, commit ${report.oldServer.commit.slice(0, 12)}) is that commit's server, built with its own rolldown config in a temporary git worktree and started with its own start script's Node flags, on its own default store in a fresh data directory, under the same load in the same interleaved rounds.`,
        ""
      ]
      : []),
    ...report.cells.flatMap((c) => [cellTable(c, report.oldServer?.ref), ""])
  ].join("\n")
