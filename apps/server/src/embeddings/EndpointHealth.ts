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

export const windowMs = 5 * 60_000
const maxSamples = 2048
const recomputeMs = 1_000

class Series {
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
  readonly stats: (now: number) => ReadonlyMap<string, EndpointStats>
}>()("@switchyard/server/embeddings/EndpointHealth") {
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
        s.samples.push(sample)
        if (s.samples.length > maxSamples) s.samples.splice(0, s.samples.length - maxSamples)
        s.dirty = true
      },
      failure: (id, at) => {
        of(id).lastFailureAt = at
      },
      stats: (now) => {
        const out = new Map<string, EndpointStats>()
        for (const [id, s] of series) out.set(id, s.stats(now))
        return out
      }
    })
  })
}

