import { assert, describe, it } from "@effect/vitest"
import * as PgServer from "../src/PgServer.ts"
import * as SoakReport from "../src/SoakReport.ts"

const period = (index: number, seconds: number, requests: number, gatewayCpuMs: number, rssMb: number, extra: Partial<SoakReport.Period> = {}): SoakReport.Period => ({
  index,
  seconds,
  requests,
  rps: requests / seconds,
  p50: 10,
  failures: 0,
  gatewayCpuMs,
  databaseCpuMs: undefined,
  rssMb,
  dataBytes: 1e6 + index * 1e5,
  ...extra
})

const series = (periods: ReadonlyArray<SoakReport.Period>, store: SoakReport.Series["store"] = "sqlite"): SoakReport.Series => ({
  store,
  seededRows: 0,
  seedMs: undefined,
  startRssMb: 200,
  startDataBytes: 1e6,
  periods
})

describe("SoakReport", () => {
  it("reads a 30-minute soak: last minute against the first, RSS over the last 10 minutes, data per million requests", () => {
    const minutes = Array.from({ length: 30 }, (_, i) => period(i + 1, 60, 60_000, 60_000 * (1 + i / 100), 300 + i))
    const summary = SoakReport.summarise(series(minutes))!
    assert.closeTo(summary.cpuRatio, 1.29, 1e-9)
    assert.strictEqual(summary.rpsRatio, 1)
    // RSS at the end of minute 30 less at the end of minute 20.
    assert.strictEqual(summary.rssGrowthMb, 10)
    assert.strictEqual(summary.rssWindowSeconds, 600)
    assert.strictEqual(summary.requests, 1_800_000)
    assert.closeTo(summary.dataBytesPerMillion, (30 * 1e5) / 1.8, 1e-6)
    const bar = SoakReport.soakBars(summary)[0]!
    assert.isTrue(bar.holds)
    assert.isFalse(SoakReport.soakBars({ ...summary, rssGrowthMb: 10.5 })[0]!.holds)
  })

  it("takes the last third of a shorter run, from the RSS at the start when that is all of it", () => {
    const rounds = Array.from({ length: 6 }, (_, i) => period(i + 1, 20, 20_000, 25_000 + i * 1000, 250 + 2 * i))
    const summary = SoakReport.summarise(series(rounds))!
    assert.strictEqual(summary.rssWindowSeconds, 40)
    assert.strictEqual(summary.rssGrowthMb, 260 - 256)
    const one = SoakReport.summarise(series([period(1, 60, 100, 100, 230)]))!
    assert.strictEqual(one.rssWindowSeconds, 60)
    assert.strictEqual(one.rssGrowthMb, 30)
    const shown = SoakReport.soakBars(one)[0]!
    assert.isUndefined(shown.holds)
    assert.include(SoakReport.barsTable([shown]).join("\n"), "| 30.000 | ≤ 10 | not judged")
    assert.isUndefined(SoakReport.summarise(series([])))
  })

  it("holds rounds to the issue's bars on gateway plus database CPU", () => {
    const first = period(1, 20, 20_000, 20_000, 250, { databaseCpuMs: 2_000 })
    const within = period(6, 20, 17_000, 17_000 * 1.1, 250, { databaseCpuMs: 17_000 * 0.1 })
    const bars = SoakReport.roundBars(SoakReport.summarise(series([first, within], "postgres"))!)
    // (18,700 + 1,700) / 17,000 = 1.2 ms against (20,000 + 2,000) / 20,000 = 1.1 ms
    assert.closeTo(bars[0]!.value, 1.2 / 1.1, 1e-9)
    assert.isTrue(bars[0]!.holds)
    assert.closeTo(bars[1]!.value, 0.85, 1e-9)
    assert.isTrue(bars[1]!.holds)
    const slower = SoakReport.roundBars(SoakReport.summarise(series([first, { ...within, rps: within.rps * 0.99, databaseCpuMs: 4_000 }], "postgres"))!)
    assert.isFalse(slower[0]!.holds)
    assert.isFalse(slower[1]!.holds)
  })

  it("compares a seeded ledger with an empty one on medians", () => {
    const rounds = (cpu: ReadonlyArray<number>, rps: ReadonlyArray<number>) =>
      cpu.map((ms, i) => ({ ...period(i + 1, 20, 1000, ms * 1000, 250), rps: rps[i]! }))
    const empty = series(rounds([1, 1.2, 1.1], [900, 1000, 950]))
    const seeded = { ...series(rounds([1.3, 1.15, 1.2], [880, 860, 900])), seededRows: 1_000_000 }
    const comparison = SoakReport.compare(seeded, empty)
    assert.closeTo(comparison.cpuRatio, 1.2 / 1.1, 1e-9)
    assert.closeTo(comparison.rpsRatio, 880 / 950, 1e-9)
    assert.deepStrictEqual(comparison.bars.map((b) => b.holds), [true, true])
    assert.include(comparison.bars[0]!.text, "1,000,000-row ledger")
  })

  it("prints a row per period and the verdicts", () => {
    const text = SoakReport.markdown(series([period(1, 60, 6000, 6000, 300), period(2, 60, 5400, 6480, 301)]), "soak")
    assert.include(text, "| minute | req/s | p50 ms | gateway CPU ms/req | RSS MB | data MB | failures |")
    assert.include(text, "| 2 | 90 | 10.00 | 1.200 | 301 | 1.1 | 0 |")
    assert.include(text, "minute 2 ÷ minute 1: CPU/req 1.200×, req/s 0.900×")
  })
})

describe("PgServer", () => {
  it("counts the measured database's processes and the shared ones, not other databases', nor its own connection", () => {
    const rows = [
      { pid: 10, datname: "mine" },
      { pid: 11, datname: "mine" },
      { pid: 12, datname: "other" },
      { pid: 13, datname: null },
      { pid: 14, datname: "mine" }
    ]
    assert.deepStrictEqual(PgServer.pidsFor(rows, "mine", 14, () => 1), [10, 11, 13])
    assert.deepStrictEqual(PgServer.pidsFor(rows, "mine", 14, () => 7), [10, 11, 13, 7])
  })

  it("sums CPU between two readings, a process that appeared counting from zero", () => {
    const before = new Map([[1, 100], [2, 50], [3, 10]])
    const after = new Map([[1, 130], [2, 50], [4, 7]])
    assert.strictEqual(PgServer.cpuBetween(before, after), 37)
  })
})
