import autocannon from "autocannon"

/**
 * One closed-loop load run: `connections` clients each send the next request as soon as the
 * previous answer arrived, for `seconds`. Latencies are kept at full resolution (autocannon's own
 * histogram rounds to whole milliseconds, too coarse for a sub-millisecond overhead).
 *
 * Each run starts with no request in flight, so its first moments complete nothing; counting them
 * would understate a slow target's throughput by its latency over the run's length. Rates and
 * percentiles are therefore taken over the answers completed after a ramp (a fifth of the run, at
 * most one second).
 */
export interface LoadRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly connections: number
  readonly seconds: number
}

export interface LoadResult {
  /** Successful answers in the measured window (after the ramp). */
  readonly ok: number
  /** Successful answers in the whole run. */
  readonly okTotal: number
  readonly non2xx: number
  /** The answers other than 2xx, by status. */
  readonly statuses: Readonly<Record<number, number>>
  readonly errors: number
  readonly timeouts: number
  readonly seconds: number
  readonly rps: number
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly bytes: number
}

const percentile = (sorted: Float64Array, p: number): number => {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))
  return sorted[rank]!
}

export const run = (request: LoadRequest): Promise<LoadResult> =>
  new Promise((resolve, reject) => {
    let latencies = new Float64Array(1 << 16)
    let completions = new Float64Array(1 << 16)
    let count = 0
    let non2xx = 0
    const statuses: Record<number, number> = {}
    let bytes = 0
    const started = process.hrtime.bigint()
    let guard: NodeJS.Timeout | undefined
    const instance = autocannon({
      url: request.url,
      method: "POST",
      headers: { "content-type": "application/json", ...request.headers },
      body: request.body,
      connections: request.connections,
      duration: request.seconds,
      sampleInt: 100,
      timeout: 30,
      skipAggregateResult: true
    } as autocannon.Options, (error, result) => {
      if (guard !== undefined) clearTimeout(guard)
      if (error) return reject(error)
      const elapsed = Number(process.hrtime.bigint() - started) / 1e9
      const ramp = Math.min(request.seconds / 5, 1)
      const kept: Array<number> = []
      for (let i = 0; i < count; i++) if (completions[i]! >= ramp) kept.push(latencies[i]!)
      const seconds = elapsed - ramp
      const sorted = Float64Array.from(kept).sort()
      resolve({
        ok: kept.length,
        okTotal: count,
        non2xx,
        statuses,
        errors: result.errors,
        timeouts: result.timeouts,
        seconds,
        rps: kept.length / seconds,
        p50: percentile(sorted, 0.5),
        p90: percentile(sorted, 0.9),
        p99: percentile(sorted, 0.99),
        bytes
      })
    })
    instance.on("response", (_client: unknown, status: number, resBytes: number, responseTime: number) => {
      if (status < 200 || status >= 300) {
        non2xx++
        statuses[status] = (statuses[status] ?? 0) + 1
        return
      }
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2)
        grown.set(latencies)
        latencies = grown
        const more = new Float64Array(completions.length * 2)
        more.set(completions)
        completions = more
      }
      completions[count] = Number(process.hrtime.bigint() - started) / 1e9
      latencies[count++] = responseTime
      bytes += resBytes
    })
    guard = setTimeout(() => instance.stop(), (request.seconds + 30) * 1000)
  })
