import { afterAll, assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as JsonDepth from "../../src/http/JsonDepth.ts"
import { type BundleProcess, healthy, launch } from "../support/BundleProcess.ts"
import { freePort } from "../support/ServerProcess.ts"
import { dataDirWithStore } from "./GatewayProcess.ts"
import { level, record, sleep } from "./Reliability.ts"

// Issue #37: "one standard key can spend a gigabyte". Eight 8 MB JSON bodies nested millions deep,
// at once, against the built server: each is answered 400 or 413 from its bytes (never parsed
// into objects), RSS grows by at most 100 MB, and a public GET keeps answering within 100 ms
// (p99) meanwhile. The bounds on time and memory hold in `pnpm test:reliability`; `pnpm test`
// checks the answers.
//
// The GET's p99 is the issue's figure, always measured and printed; it is asserted only on a machine
// that others do not saturate (a load average under its cores, before and after), since on a
// loaded two-core machine it measures the other processes. What the gateway controls is asserted
// always: how long the depth scan itself holds the event loop, per chunk as the socket delivers
// it and per 8 MB body, timed on the same code and bytes in this process (the best of five runs:
// the scan's own cost, without the preemptions of others).

const apiKey = KeySecret.generate()
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10

const rssOf = (pid: number) => {
  const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/^VmRSS:\s+(\d+) kB$/mu.exec(status)![1]) * 1024
}

const started: Array<BundleProcess> = []
afterAll(() => {
  for (const gateway of started) if (gateway.isRunning()) gateway.child.kill("SIGKILL")
})

const postBody = (origin: string, body: Buffer) =>
  new Promise<number>((resolve) => {
    const request = Http.request(`${origin}/api/v1/embeddings`, {
      method: "POST",
      agent: false,
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "content-length": body.length }
    }, (response) => {
      // The answer may come (and the connection close) before the whole body was sent: the
      // server refuses it from its first bytes. What counts is the answer.
      resolve(response.statusCode!)
      response.resume()
      response.on("error", () => {})
    })
    request.on("error", () => resolve(0))
    request.end(body)
  })

/** The socket's chunks, as the scan sees them: Node reads at most 64 KiB at a time. */
const socketChunk = 64 * 1024

/** The depth scan's blocking over `body` in socket-sized chunks: the longest chunk and the whole body, best of five runs. */
const scanBlocking = (body: Buffer) => {
  let best = { chunk_ms: Infinity, body_ms: Infinity }
  for (let run = 0; run < 5; run++) {
    const scan = JsonDepth.scanner()
    let longest = 0
    const began = performance.now()
    for (let at = 0; at < body.length; at += socketChunk) {
      const t = performance.now()
      const tooDeep = scan.push(body.subarray(at, at + socketChunk))
      longest = Math.max(longest, performance.now() - t)
      if (tooDeep >= 0) break
    }
    const total = performance.now() - began
    if (total < best.body_ms) best = { chunk_ms: longest, body_ms: total }
  }
  return { chunk_ms: Math.round(best.chunk_ms * 100) / 100, body_ms: Math.round(best.body_ms * 100) / 100 }
}

const saturated = () => Os.loadavg()[0]! >= Os.availableParallelism()

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0
}

describe("reliability: hostile bodies against the built server", () => {
  it("eight concurrent 8 MB deeply nested bodies (five rounds): each 400 or 413, RSS growth ≤ 100 MB, a public GET's p99 ≤ 100 ms meanwhile", async () => {
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const gateway = launch({
      SWITCHYARD_HOST: "127.0.0.1",
      SWITCHYARD_PORT: String(port),
      SWITCHYARD_DATA_DIR: dataDirWithStore(),
      DATABASE_URL: "",
      SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: KeySecret.generate(),
      SWITCHYARD_RATE_LIMIT: "off",
      SWITCHYARD_LOG_LEVEL: "warn"
    })
    started.push(gateway)
    await healthy(gateway, origin)
    const pid = gateway.child.pid!
    // Warm the public GET and the model route first.
    for (let i = 0; i < 20; i++) await fetch(`${origin}/api/v1/models`).then((r) => r.arrayBuffer())
    await sleep(500)
    const before = rssOf(pid)

    // Just under the 8 MiB limit: an object whose input nests as deep as the bytes allow, and a
    // variant with the brackets after a long string (the scan must walk the string first).
    const size = 8 * 1024 * 1024 - 64
    const head = Buffer.from(`{"model":"switchyard/local-embed","input":`)
    const nested = Buffer.concat([head, Buffer.alloc(size - head.length, "[")])
    const afterString = Buffer.concat([head, Buffer.from(`["${"a".repeat(4 * 1024 * 1024)}",`), Buffer.alloc(size - head.length - 4 * 1024 * 1024 - 4, "{")])
    const bodies = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? nested : afterString))

    const loadBefore = Os.loadavg()[0]!
    const saturatedBefore = saturated()
    let peak = before
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, rssOf(pid))
        await sleep(20)
      }
    })()
    // The public GET is timed from a process of its own: this one is busy sending 64 MB.
    const prober = ChildProcess.spawn(process.execPath, ["-e", `
      const latencies = []
      let probing = true
      process.stdin.on("data", () => { probing = false })
      ;(async () => {
        while (probing) {
          const t = performance.now()
          const response = await fetch(${JSON.stringify(`${origin}/api/v1/models`)})
          await response.arrayBuffer()
          latencies.push(performance.now() - t)
          await new Promise((resolve) => setTimeout(resolve, 5))
        }
        process.stdout.write(JSON.stringify(latencies))
        process.exit(0)
      })()
    `], { stdio: ["pipe", "pipe", "inherit"] })
    let proberOut = ""
    prober.stdout.on("data", (chunk) => (proberOut += String(chunk)))
    const proberDone = new Promise<void>((resolve) => prober.once("exit", () => resolve()))
    await sleep(300)
    const began = performance.now()
    // Five rounds of eight at once, so that the GET's p99 rests on a few hundred probes.
    const statuses: Array<number> = []
    for (let round = 0; round < 5; round++) statuses.push(...await Promise.all(bodies.map((body) => postBody(origin, body))))
    const ms = performance.now() - began
    await sleep(300)
    prober.stdin.write("stop")
    await proberDone
    sampling = false
    await sampler
    const latencies = JSON.parse(proberOut) as Array<number>

    const figures = {
      statuses,
      seconds: Math.round(ms) / 1000,
      rss_before_mb: mb(before),
      rss_peak_growth_mb: mb(peak - before),
      public_get_probes: latencies.length,
      public_get_p50_ms: Math.round(percentile(latencies, 50)),
      public_get_p99_ms: Math.round(percentile(latencies, 99)),
      public_get_max_ms: Math.round(Math.max(...latencies)),
      load_average: [Math.round(loadBefore * 10) / 10, Math.round(Os.loadavg()[0]! * 10) / 10],
      cores: Os.availableParallelism(),
      scan_nested: scanBlocking(nested),
      scan_after_string: scanBlocking(afterString)
    }
    console.log(`hostile bodies: ${JSON.stringify(figures)}`)
    record("hostile-bodies", { requests: statuses.length + latencies.length, faultsInjected: statuses.length })

    for (const status of statuses) assert.include([400, 413], status, JSON.stringify(figures))
    if (level === "full") {
      assert.isAtMost(figures.rss_peak_growth_mb, 100, JSON.stringify(figures))
      // The scan of one 64 KiB chunk holds the loop well under a millisecond on an idle core; 5 ms
      // leaves room for a slow one. A whole 8 MB body (the string variant walks all of it) within
      // the issue's 100 ms, however its chunks fall.
      for (const scan of [figures.scan_nested, figures.scan_after_string]) {
        assert.isAtMost(scan.chunk_ms, 5, JSON.stringify(figures))
        assert.isAtMost(scan.body_ms, 100, JSON.stringify(figures))
      }
      if (saturatedBefore || saturated()) {
        console.log(`hostile bodies: the public GET's p99 (${figures.public_get_p99_ms} ms) is not asserted: load average ${figures.load_average.join(" → ")} on ${figures.cores} cores`)
      } else {
        assert.isAtMost(figures.public_get_p99_ms, 100, JSON.stringify(figures))
      }
    }
    gateway.child.kill("SIGTERM")
    assert.deepStrictEqual(await gateway.exited, { code: 0, signal: null })
  }, 240_000)
})
