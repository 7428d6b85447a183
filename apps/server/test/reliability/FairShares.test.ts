import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Os from "node:os"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { type BundleProcess, healthy, launch } from "../support/BundleProcess.ts"
import { heldByWorkspace } from "../support/HeldMemory.ts"
import * as MemoryCgroup from "../support/MemoryCgroup.ts"
import { freePort } from "../support/ServerProcess.ts"
import { tempDir } from "../support/TestServer.ts"
import { level, record, sleep } from "./Reliability.ts"

// Issue 65, measured in a real 256 MiB memory cgroup (a container's limit; the gateway derives its
// 32 MiB budget from it): one workspace floods with large valid requests from 16 connections,
// another sends small ones from 3. Every small request is served, none waits long, the flooding
// workspace is the one refused (naming its share), and the kernel kills nothing.

const cgroup = MemoryCgroup.create("switchyard-shares", 256 * 1024 * 1024)
const started: Array<BundleProcess> = []
afterAll(() => {
  for (const gateway of started) if (gateway.isRunning()) gateway.child.kill("SIGKILL")
  if (typeof cgroup !== "string") cgroup.remove()
})

interface Reply {
  readonly status: number
  readonly ms: number
  readonly json: any
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
}

describe("reliability: fair shares of the memory budget in a 256 MiB cgroup", () => {
  it("a workspace flooding with large requests cannot make another's small ones wait long or be refused", async (context) => {
    if (typeof cgroup === "string") {
      console.log(`fair shares: skipped, no memory cgroup: ${cgroup}`)
      return context.skip()
    }
    const apiKey = KeySecret.generate()
    const managementKey = KeySecret.generate()
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const gateway = launch({
      SWITCHYARD_HOST: "127.0.0.1",
      SWITCHYARD_PORT: String(port),
      SWITCHYARD_DATA_DIR: tempDir("shares"),
      DATABASE_URL: "",
      SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
      SWITCHYARD_RATE_LIMIT: "off",
      SWITCHYARD_LOG_FORMAT: "json"
    })
    cgroup.add(gateway.child.pid!)
    started.push(gateway)
    try {
      await healthy(gateway, origin)
      assert.match(gateway.stdout(), /request bytes in flight at most 32 MiB, 25% of it per workspace/u)
      const post = async (key: string, path: string, body: string): Promise<Reply> => {
        const at = performance.now()
        const response = await fetch(`${origin}/api/v1${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body
        })
        return { status: response.status, ms: performance.now() - at, json: await response.json() }
      }
      const workspaceB = (await post(managementKey, "/workspaces", JSON.stringify({ name: "Small", slug: "small" }))).json.data.id as string
      const keyB = (await post(managementKey, "/keys", JSON.stringify({ name: "small", workspace_id: workspaceB }))).json.key as string
      const large = JSON.stringify({ model: "switchyard/local-embed", input: "large", dimensions: 8, trace: { notes: "x".repeat(1_000_000) } })
      const small = JSON.stringify({ model: "switchyard/local-embed", input: "a short question", dimensions: 8 })
      const until = performance.now() + (level === "full" ? 60_000 : 4_000)
      let peakA = 0
      const flood = async () => {
        const seen: Array<Reply> = []
        while (performance.now() < until) seen.push(await post(apiKey, "/embeddings", large))
        return seen
      }
      const smallOnes = async () => {
        const seen: Array<Reply> = []
        await sleep(300)
        while (performance.now() < until) {
          seen.push(await post(keyB, "/embeddings", small))
          const held = heldByWorkspace(await (await fetch(`${origin}/metrics`)).text())
          peakA = Math.max(peakA, ...Object.entries(held).filter(([w]) => w !== workspaceB).map(([, bytes]) => bytes))
        }
        return seen
      }
      const replies = await Promise.all([...Array.from({ length: 3 }, smallOnes), ...Array.from({ length: 16 }, flood)])
      const b = replies.slice(0, 3).flat()
      const flooded = replies.slice(3).flat()
      const latencies = b.map((r) => r.ms)
      const figures = {
        largeRequests: flooded.length,
        largeServed: flooded.filter((r) => r.status === 200).length,
        largeRefused: flooded.filter((r) => r.status === 503).length,
        largeHeldPeakMiB: Math.round(peakA / 1024 / 1024),
        smallRequests: b.length,
        smallServed: b.filter((r) => r.status === 200).length,
        smallP50Ms: Math.round(percentile(latencies, 0.5)),
        smallP99Ms: Math.round(percentile(latencies, 0.99)),
        smallMaxMs: Math.round(Math.max(...latencies)),
        cgroupPeakMiB: Math.round((cgroup.peakBytes() ?? 0) / 1024 / 1024),
        oomKills: cgroup.oomKills(),
        loadAverage: Os.loadavg()[0]!.toFixed(1)
      }
      console.log(`fair shares in a 256 MiB cgroup: ${JSON.stringify(figures)}`)
      assert.strictEqual(figures.smallServed, figures.smallRequests, JSON.stringify(b.filter((r) => r.status !== 200).slice(0, 2)))
      assert.isBelow(figures.smallMaxMs, 10_000)
      assert.isAbove(figures.largeRefused, 0)
      assert.isAbove(figures.largeServed, 0)
      assert.strictEqual(figures.oomKills, 0)
      record("fair-shares", { requests: flooded.length + b.length })
    } finally {
      await gateway.stop()
    }
  }, 300_000)
})
