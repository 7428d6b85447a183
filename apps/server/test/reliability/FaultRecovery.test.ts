import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { type BundleProcess, healthy, launch } from "../support/BundleProcess.ts"
import { freePort } from "../support/ServerProcess.ts"
import * as MemoryCgroup from "../support/MemoryCgroup.ts"
import { startStoreRelay } from "../support/StoreRelay.ts"
import { dropDatabase, freshDatabase, postgresReachable, tempDir } from "../support/TestServer.ts"
import { dataDirWithStore, type Memory, memoryProbeFlags, memoryReader } from "./GatewayProcess.ts"
import { postJson, sendBytes } from "./RawHttp.ts"
import { level, record, sleep } from "./Reliability.ts"

// The built server (`dist/main.mjs`, the production command) against the faults of issue #30 that
// are not about money: stalled request bodies, a restart right after kill -9, a silent store.
// Long and heavy: `pnpm test:reliability` only. Quick versions run in `pnpm test`
// (test/http/BodyTimeout, test/production/DataDirLock, test/production/StoreDown).

const managementKey = KeySecret.generate()
const apiKey = KeySecret.generate()
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10

const baseEnv = (port: number): Record<string, string> => ({
  SWITCHYARD_HOST: "127.0.0.1",
  SWITCHYARD_PORT: String(port),
  SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
  SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
  SWITCHYARD_RATE_LIMIT: "off",
  SWITCHYARD_LOG_FORMAT: "json",
  SWITCHYARD_LOG_LEVEL: "warn"
})

const started: Array<BundleProcess> = []
afterAll(async () => {
  for (const gateway of started) {
    if (gateway.isRunning()) gateway.child.kill("SIGKILL")
  }
})

/** The sockets a process has open (its descriptors that are sockets), from /proc. */
const openSockets = (pid: number) =>
  Fs.readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return Fs.readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:")
    } catch {
      return false
    }
  }).length

const statusCount = (stdout: string, status: number) => stdout.match(new RegExp(`"message":"request"[^\\n]*"status":${status}[,}]`, "gu"))?.length ?? 0

// Made once for the file: a 256 MiB memory cgroup for the stalled bodies (a container's limit),
// or the reason there is none here.
const cgroup = level === "full" ? MemoryCgroup.create("switchyard-stalled", 256 * 1024 * 1024) : "the quick level"
afterAll(() => {
  if (typeof cgroup !== "string") cgroup.remove()
})

describe.skipIf(level !== "full")("reliability: stalled request bodies against the built server in a 256 MiB memory cgroup", () => {
  it("5,000 stalled bodies (500 at a time): never killed, each ends at its 408 with its access line within 10 s, no socket or live heap left behind", async (context) => {
    if (typeof cgroup === "string") {
      console.log(`stalled bodies: skipped, no memory cgroup: ${cgroup}`)
      return context.skip()
    }
    // On the embedded default (SQLite): the store a container runs with.
    const total = 5000
    const concurrency = 500
    const bodyTimeoutMs = 1000
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const memoryFile = NodePath.join(tempDir("memory"), "memory.json")
    const gateway = launch({
      ...baseEnv(port),
      SWITCHYARD_DATA_DIR: tempDir("stalled"),
      SWITCHYARD_BODY_TIMEOUT_MS: String(bodyTimeoutMs),
      SWITCHYARD_LOG_LEVEL: "info",
      SWITCHYARD_TEST_MEMORY_FILE: memoryFile
    }, [], { nodeFlags: memoryProbeFlags })
    cgroup.add(gateway.child.pid!)
    started.push(gateway)
    await healthy(gateway, origin)
    // The gateway read its cgroup's limit and sized its budget to it.
    assert.match(gateway.stdout(), /memory: cgroup limit 256 MiB, request bytes in flight at most 32 MiB/u)
    const memory = memoryReader(() => gateway.child.kill("SIGUSR2"), memoryFile, () => gateway.stderr())
    // Headers and part of a body, then silence.
    const stalled = `POST /api/v1/embeddings HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${apiKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n{"model": "switchyard/local-embed", "input": "the rest never comes`
    let sent = 0
    let worstLineLagMs = 0
    const wave = async (size: number) => {
      const answers = await Promise.all(Array.from({ length: size }, () => sendBytes(origin, stalled, bodyTimeoutMs + 15_000)))
      sent += size
      const lastAnswer = Date.now()
      for (const answer of answers) assert.strictEqual(answer.status, 408, answer.raw.slice(0, 300))
      // Every access line of the wave within 10 s of its 408.
      while (statusCount(gateway.stdout(), 408) < sent && Date.now() - lastAnswer < 10_000) await sleep(50)
      worstLineLagMs = Math.max(worstLineLagMs, Date.now() - lastAnswer)
      assert.strictEqual(statusCount(gateway.stdout(), 408), sent, `access lines of the 408s within 10 s (${sent} sent)`)
    }
    try {
      // Warm-up (code paths compiled, pools sized) before the baseline.
      await wave(concurrency)
      const live: Memory = await memory("collected")
      const before: Memory = await memory("plain")
      const socketsBefore = openSockets(gateway.child.pid!)
      const startedAt = Date.now()
      let after = before
      let peakRss = before.rss
      for (let done = 0; done < total; done += concurrency) {
        await wave(Math.min(concurrency, total - done))
        assert.isTrue(gateway.isRunning(), "the gateway is alive after the wave")
        after = await memory("plain")
        peakRss = Math.max(peakRss, after.rss)
      }
      const seconds = (Date.now() - startedAt) / 1000
      const socketsAfter = openSockets(gateway.child.pid!)
      const collected: Memory = await memory("collected")
      const report = {
        stalled: total,
        at_once: concurrency,
        cgroup_limit_mb: 256,
        cgroup_peak_mb: mb(cgroup.peakBytes() ?? 0),
        oom_kills: cgroup.oomKills(),
        seconds,
        worst_access_line_lag_ms: worstLineLagMs,
        sockets_before: socketsBefore,
        sockets_after: socketsAfter,
        rss_before_mb: mb(before.rss),
        rss_after_mb: mb(after.rss),
        rss_peak_growth_mb: mb(peakRss - before.rss),
        heap_live_before_mb: mb(live.heapUsed),
        heap_live_after_mb: mb(collected.heapUsed)
      }
      console.log(`stalled bodies: ${JSON.stringify(report)}`)
      assert.strictEqual(report.oom_kills, 0, JSON.stringify(report))
      assert.isAtMost(socketsAfter, socketsBefore, JSON.stringify(report))
      // Each stalled request used to keep about 24 KB of heap (its fiber and what it held) until shutdown.
      assert.isAtMost(mb(collected.heapUsed - live.heapUsed), 5, JSON.stringify(report))
      // A normal request is still served.
      const served = await postJson(origin, "/api/v1/embeddings", apiKey, { model: "switchyard/local-embed", input: "after", dimensions: 8 })
      assert.strictEqual(served.status, 200)
      await gateway.stop()
      assert.deepStrictEqual(await gateway.exited, { code: 0, signal: null }, "never killed: a graceful exit at the end")
      // Nothing was left for shutdown to interrupt: no request ended as a 503.
      assert.strictEqual(statusCount(gateway.stdout(), 503), 0, gateway.stdout().slice(-2000))
      assert.strictEqual(statusCount(gateway.stdout(), 408), sent)
      record("stalled-bodies", { requests: sent + 1, faultsInjected: sent, leaksFound: 0 })
    } finally {
      await gateway.stop()
    }
  }, 900_000)
})

/**
 * The built server started under a `sh` that then becomes a `sleep`: the gateway's parent never
 * waits for it, so once killed it stays visible (a zombie) until that parent goes, as under a
 * supervisor that has not reaped it yet.
 */
const launchUnreaped = async (env: Record<string, string>) => {
  const gateway = launch(env, ["sh", "-c", `"$@" & echo "pid $!"; exec sleep 3600`, "sh"])
  started.push(gateway)
  while (!/^pid \d+$/mu.test(gateway.stdout())) await sleep(10)
  const pid = Number(/^pid (\d+)$/mu.exec(gateway.stdout())![1])
  const status = () => Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  // Every thread gone (so its files and locks closed), the process still there: what its parent
  // would be told, before it has reaped it.
  const dead = () => /^State:\s+Z/mu.test(status()) && /^Threads:\s+1$/mu.test(status())
  const kill9 = async () => {
    process.kill(pid, "SIGKILL")
    while (!dead()) await sleep(2)
  }
  // Healthy, or the start refused: the wrapper outlives the gateway, so its exit says nothing.
  const ready = async (origin: string) => {
    const deadline = Date.now() + 120_000
    while (Date.now() < deadline) {
      if (gateway.stderr().includes("cannot start")) throw new Error(`the start was refused: ${gateway.stderr()}`)
      const ok = await fetch(`${origin}/api/v1/health`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.ok, () => false)
      if (ok) return
      await sleep(20)
    }
    throw new Error(`the gateway did not become healthy: ${gateway.stdout()}\n${gateway.stderr()}`)
  }
  return { gateway, pid, kill9, dead, ready }
}

describe.skipIf(level !== "full")("reliability: embedded-store restart right after kill -9, against the built server", () => {
  it("a restart started the moment the killed process is dead (still a zombie) starts on the first try, and keeps what was written", async () => {
    const rounds = 5
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const env = { ...baseEnv(port), SWITCHYARD_DATA_DIR: dataDirWithStore(), DATABASE_URL: "" }
    let current = await launchUnreaped(env)
    await current.ready(origin)
    const restartMs: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      const created = await postJson(origin, "/api/v1/keys", managementKey, { name: `before kill ${round}` })
      assert.strictEqual(created.status, 201)
      // Under load: requests in flight when the process dies.
      const load = Array.from({ length: 8 }, () =>
        postJson(origin, "/api/v1/embeddings", apiKey, { model: "switchyard/local-embed", input: "in flight", dimensions: 8 }))
      await sleep(20)
      await current.kill9()
      const killedAt = Date.now()
      assert.isTrue(current.dead())
      const next = await launchUnreaped(env)
      // First try: a refused start fails here.
      await next.ready(origin)
      restartMs.push(Date.now() - killedAt)
      assert.notInclude(next.gateway.stderr(), "in use by", `round ${round}`)
      await Promise.all(load)
      const names = await fetch(`${origin}/api/v1/keys`, { headers: { authorization: `Bearer ${managementKey}` } })
        .then((r) => r.json() as Promise<{ data: Array<{ name: string }> }>)
        .then((body) => body.data.map((k) => k.name))
      assert.include(names, `before kill ${round}`)
      current.gateway.child.kill("SIGKILL")
      current = next
    }
    console.log(`restart after kill -9: ${JSON.stringify({ rounds, restart_to_healthy_ms: restartMs })}`)
    await current.kill9()
    current.gateway.child.kill("SIGKILL")
    record("restart-after-kill", { crashesSurvived: rounds, faultsInjected: rounds })
  }, 900_000)
})

const reachable = await postgresReachable()

describe.skipIf(level !== "full" || (!reachable && process.env.CI !== "true"))(
  "reliability: a silent PostgreSQL (blackhole), against the built server",
  () => {
    it("/health answers 503 within 3 s for the whole 10 s blackhole under load, and 200 once the store speaks again", async () => {
      const database = await freshDatabase()
      const link = await startStoreRelay(database)
      const port = await freePort()
      const origin = `http://127.0.0.1:${port}`
      const gateway = launch({
        ...baseEnv(port),
        DATABASE_URL: link.url,
        SWITCHYARD_SECRET_KEY: process.env.SWITCHYARD_SECRET_KEY ?? ""
      })
      started.push(gateway)
      try {
        await healthy(gateway, origin)
        let loading = true
        let requests = 0
        const client = async () => {
          while (loading) {
            await postJson(origin, "/api/v1/embeddings", apiKey, { model: "switchyard/local-embed", input: "load", dimensions: 8 })
            requests++
          }
        }
        const clients = Array.from({ length: 8 }, client)
        await sleep(1000)
        link.silence()
        const silencedAt = Date.now()
        const probes: Array<{ readonly status: number; readonly ms: number }> = []
        const probe = async () => {
          const at = Date.now()
          const status = await fetch(`${origin}/api/v1/health`, { signal: AbortSignal.timeout(20_000) }).then((r) => r.status, () => 0)
          probes.push({ status, ms: Date.now() - at })
        }
        // Three probers, each asking again as soon as it has its answer, started apart.
        const prober = async (delayMs: number) => {
          await sleep(delayMs)
          while (Date.now() - silencedAt < 10_000) await probe()
        }
        await Promise.all([prober(0), prober(400), prober(1300)])
        await link.cut()
        await link.open()
        const restoredAt = Date.now()
        let back = 0
        while (back !== 200 && Date.now() - restoredAt < 30_000) {
          back = await fetch(`${origin}/api/v1/health`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status, () => 0)
          if (back !== 200) await sleep(100)
        }
        const backMs = Date.now() - restoredAt
        loading = false
        await Promise.all(clients)
        const report = {
          probes: probes.length,
          statuses: [...new Set(probes.map((p) => p.status))],
          worst_ms: Math.max(...probes.map((p) => p.ms)),
          median_ms: probes.map((p) => p.ms).sort((a, b) => a - b)[Math.floor(probes.length / 2)],
          health_back_after_ms: backMs,
          load_requests: requests
        }
        console.log(`health in a blackhole: ${JSON.stringify(report)}`)
        for (const p of probes) assert.strictEqual(p.status, 503, JSON.stringify(report))
        assert.isAtMost(report.worst_ms, 3000, JSON.stringify(report))
        assert.strictEqual(back, 200, JSON.stringify(report))
        record("store-blackhole", { requests: requests + probes.length, faultsInjected: 1 })
      } finally {
        await link.cut()
        await gateway.stop()
        await dropDatabase(database)
      }
    }, 300_000)
  }
)
