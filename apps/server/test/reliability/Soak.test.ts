import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { tempDir } from "../support/TestServer.ts"
import { dataDirWithStore, type GatewayProcess, type Memory, startGatewayProcess } from "./GatewayProcess.ts"
import { isAnswer, postJson, send } from "./RawHttp.ts"
import { level, record, size, sleep } from "./Reliability.ts"

const mb = (bytes: number) => Math.round(bytes / 1_048_576 * 10) / 10

// Least-squares slope of heap use over time, in MB per minute; taken over the second half of the
// run, after the first minutes' warm-up (compiled code, caches filling to their caps).
const slope = (samples: ReadonlyArray<{ readonly at: number; readonly memory: Memory }>) => {
  const xs = samples.map((s) => s.at / 60_000)
  const ys = samples.map((s) => mb(s.memory.heapUsed))
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length
  const my = ys.reduce((a, b) => a + b, 0) / ys.length
  const num = xs.reduce((sum, x, i) => sum + (x - mx) * (ys[i]! - my), 0)
  const den = xs.reduce((sum, x) => sum + (x - mx) ** 2, 0)
  return den === 0 ? 0 : num / den
}

// A soak takes its time: it runs in `pnpm test:reliability` only, never in `pnpm test`.
describe.skipIf(level !== "full")("reliability: soak", () => {
  const apiKey = KeySecret.generate()
  const managementKey = KeySecret.generate()
  let upstream: FakeUpstream.FakeServer
  let gateway: GatewayProcess
  let requests = 0

  beforeAll(async () => {
    upstream = await FakeOpenAi.start({ defaultWidth: 256 })
    upstream.setBehaviour({ _tag: "Delay", ms: 5 })
    const configPath = NodePath.join(tempDir("config"), "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [provider("alpha", upstream.url, {}, [endpoint("acme/embed", { upstream_model: "embed", dimensions: 256, pricing: { prompt: "0.02" } })])]
    }))
    gateway = await startGatewayProcess({
      SWITCHYARD_DATA_DIR: dataDirWithStore(),
      DATABASE_URL: "",
      SWITCHYARD_CONFIG: configPath,
      ALPHA_API_KEY: "sk-fake",
      SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
      SWITCHYARD_RATE_LIMIT: "1000000/60s"
    })
    const topUp = await postJson(gateway.origin, "/api/v1/credits", managementKey, { amount: 1000 })
    assert.strictEqual(topUp.status, 200)
  }, 90_000)

  afterAll(async () => {
    record("soak", { requests })
    await gateway?.stop()
    await upstream?.close()
  })

  const mix = (i: number) => {
    const pick = i % 20
    if (pick < 14) {
      return {
        method: "POST",
        path: "/api/v1/embeddings",
        key: apiKey,
        body: { model: "acme/embed", input: Array.from({ length: 1 + (i % 4) }, (_, k) => `soak request ${i} part ${k} ${"x".repeat(i % 97)}`) }
      }
    }
    if (pick < 16) return { method: "GET", path: "/api/v1/keys", key: managementKey }
    if (pick < 18) return { method: "GET", path: "/api/v1/embeddings/models", key: apiKey }
    if (pick < 19) return { method: "GET", path: "/api/v1/key", key: apiKey }
    return { method: "GET", path: "/api/v1/credits", key: managementKey }
  }

  it(`a steady ${size.soakRatePerSecond} requests a second for ${size.soakMs / 1000} s: no errors, flat memory`, async () => {
    const fire = (i: number) => {
      const r = mix(i)
      requests += 1
      return send(gateway.origin, {
        method: r.method,
        path: r.path,
        headers: { authorization: `Bearer ${r.key}`, ...(r.body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(r.body !== undefined ? { body: JSON.stringify(r.body) } : {}),
        timeoutMs: 10_000
      })
    }
    for (let i = 0; i < 200; i++) await fire(i)
    const errors: Array<string> = []
    const latencies: Array<number> = []
    const samples: Array<{ readonly at: number; readonly memory: Memory }> = []
    const started = Date.now()
    samples.push({ at: 0, memory: await gateway.memory() })
    const interval = 1000 / size.soakRatePerSecond
    const sampleEvery = Math.max(2_000, size.soakMs / 20)
    let nextSample = sampleEvery
    let inFlight = 0
    let i = 0
    const pending = new Set<Promise<void>>()
    while (Date.now() - started < size.soakMs) {
      const due = started + i * interval
      if (Date.now() < due) await sleep(due - Date.now())
      if (inFlight >= 64) {
        errors.push(`backlog at request ${i}: more than 64 in flight`)
      } else {
        inFlight += 1
        const index = i
        const p = fire(1000 + index).then((reply) => {
          inFlight -= 1
          if (!isAnswer(reply)) errors.push(`request ${index}: ${reply.error}`)
          else if (reply.status !== 200) errors.push(`request ${index}: ${reply.status} ${reply.text.slice(0, 200)}`)
          else latencies.push(reply.ms)
        })
        pending.add(p)
        void p.finally(() => pending.delete(p))
      }
      i += 1
      if (Date.now() - started >= nextSample) {
        nextSample += sampleEvery
        samples.push({ at: Date.now() - started, memory: await gateway.memory() })
      }
    }
    await Promise.all(pending)
    await sleep(200)
    samples.push({ at: Date.now() - started, memory: await gateway.memory() })
    latencies.sort((a, b) => a - b)
    const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? 0
    const first = samples[0]!.memory
    const last = samples.at(-1)!.memory
    const report = {
      requests: i,
      errors: errors.length,
      p50_ms: latencies[Math.floor(latencies.length / 2)],
      p99_ms: p99,
      heap_mb: samples.map((s) => mb(s.memory.heapUsed)),
      rss_mb: [mb(first.rss), mb(last.rss)],
      heap_slope_mb_per_min: Math.round(slope(samples.slice(Math.floor(samples.length / 2))) * 100) / 100
    }
    console.log("soak", JSON.stringify(report))
    assert.deepStrictEqual(errors.slice(0, 10), [], `${errors.length} errors`)
    assert.isAbove(latencies.length, size.soakRatePerSecond * size.soakMs / 1000 * 0.9)
    assert.isBelow(p99, 2_000)
    assert.isBelow(mb(last.heapUsed - first.heapUsed), level === "full" ? 16 : 12, JSON.stringify(report))
    if (level === "full") assert.isBelow(report.heap_slope_mb_per_min, 1, JSON.stringify(report))
    assert.isTrue(gateway.isRunning())
  }, size.soakMs + 120_000)
})
