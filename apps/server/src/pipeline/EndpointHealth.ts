import type { EndpointStats, Percentiles } from "@switchyard/core/routing/EndpointStats"
import { Context, Layer } from "effect"
import { quantileSorted } from "simple-statistics"

/**
 * Live statistics of each endpoint, measured from this process's own traffic: latency and
 * throughput percentiles over a rolling five-minute window, and the time of the last failure that
 * counted against the endpoint. Percentiles are recomputed at most once a second per endpoint, so
 * planning a request reads a cached value.
 */
export interface Sample {
  readonly at: number
  readonly latencySeconds: number
  readonly tokensPerSecond: number
}

const windowMs = 5 * 60_000
const maxSamples = 2048
const recomputeMs = 1_000
const minuteMs = 60_000
const dayMinutes = 24 * 60

/**
 * Answers and endpoint failures per minute over the last day, in a ring of one-minute buckets,
 * for the uptime over the last 5 minutes, 30 minutes and day.
 */
class Uptime {
  private readonly minute = new Array<number>(dayMinutes).fill(-1)
  private readonly ok = new Array<number>(dayMinutes).fill(0)
  private readonly failed = new Array<number>(dayMinutes).fill(0)

  add(at: number, success: boolean) {
    const m = Math.floor(at / minuteMs)
    const i = m % dayMinutes
    if (this.minute[i] !== m) {
      this.minute[i] = m
      this.ok[i] = 0
      this.failed[i] = 0
    }
    if (success) this.ok[i]! += 1
    else this.failed[i]! += 1
  }

  /** Percent of calls that did not fail in the last `windowMs` (whole minutes); `null` without calls. */
  percent(now: number, windowMs: number): number | null {
    const last = Math.floor(now / minuteMs)
    const first = last - Math.max(1, Math.ceil(windowMs / minuteMs)) + 1
    let ok = 0
    let failed = 0
    for (let i = 0; i < dayMinutes; i++) {
      const m = this.minute[i]!
      if (m >= first && m <= last) {
        ok += this.ok[i]!
        failed += this.failed[i]!
      }
    }
    return ok + failed === 0 ? null : (100 * ok) / (ok + failed)
  }
}

class Series {
  readonly uptime = new Uptime()
  samples: Array<Sample> = []
  lastFailureAt: number | undefined = undefined
  cached: EndpointStats = {}
  computedAt = -Infinity
  dirty = false

  stats(now: number): EndpointStats {
    if (this.dirty && now - this.computedAt >= recomputeMs) this.recompute(now)
    return this.lastFailureAt === this.cached.lastFailureAt ? this.cached : { ...this.cached, lastFailureAt: this.lastFailureAt }
  }

  private recompute(now: number) {
    const live = this.samples.filter((s) => now - s.at <= windowMs)
    this.samples = live
    this.computedAt = now
    this.dirty = false
    this.cached = live.length === 0
      ? { lastFailureAt: this.lastFailureAt }
      : {
        latency: percentiles(live.map((s) => s.latencySeconds)),
        throughput: percentiles(live.map((s) => s.tokensPerSecond)),
        lastFailureAt: this.lastFailureAt
      }
  }
}

const percentiles = (values: Array<number>): Percentiles => {
  const sorted = values.sort((a, b) => a - b)
  return {
    p50: quantileSorted(sorted, 0.5),
    p75: quantileSorted(sorted, 0.75),
    p90: quantileSorted(sorted, 0.9),
    p99: quantileSorted(sorted, 0.99)
  }
}

export class EndpointHealth extends Context.Service<EndpointHealth, {
  readonly success: (id: string, sample: Sample) => void
  readonly failure: (id: string, at: number) => void
  /** A health probe found the endpoint's server up again at `at`: its outage window ends. */
  readonly recovered: (id: string, at: number) => void
  /** One endpoint's statistics, `undefined` before its first call. */
  readonly statsOf: (id: string, now: number) => EndpointStats | undefined
  /** Percent of this process's calls to the endpoint in the last `windowMs` that did not fail against it. */
  readonly uptime: (id: string, now: number, windowMs: number) => number | null
}>()("@switchyard/server/pipeline/EndpointHealth") {
  static readonly layer = Layer.sync(EndpointHealth, () => {
    const series = new Map<string, Series>()
    const of = (id: string) => {
      let s = series.get(id)
      if (s === undefined) {
        s = new Series()
        series.set(id, s)
      }
      return s
    }
    return EndpointHealth.of({
      success: (id, sample) => {
        const s = of(id)
        // It answered again: its outage window ends (a circuit breaker's success closes it).
        if (s.lastFailureAt !== undefined && sample.at >= s.lastFailureAt) s.lastFailureAt = undefined
        s.uptime.add(sample.at, true)
        s.samples.push(sample)
        if (s.samples.length > maxSamples) s.samples.splice(0, s.samples.length - maxSamples)
        s.dirty = true
      },
      failure: (id, at) => {
        const s = of(id)
        s.lastFailureAt = at
        s.uptime.add(at, false)
      },
      recovered: (id, at) => {
        const s = series.get(id)
        if (s !== undefined && s.lastFailureAt !== undefined && s.lastFailureAt <= at) s.lastFailureAt = undefined
      },
      uptime: (id, now, windowMs) => series.get(id)?.uptime.percent(now, windowMs) ?? null,
      statsOf: (id, now) => series.get(id)?.stats(now)
    })
  })
}

