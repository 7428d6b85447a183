import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { DatabaseSync } from "node:sqlite"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { healthy, launch } from "../support/BundleProcess.ts"
import { freePort } from "../support/ServerProcess.ts"
import * as SmallDisk from "../support/SmallDisk.ts"
import { tempDir } from "../support/TestServer.ts"
import { record, sleep } from "./Reliability.ts"

// Issue #37, a full disk, as a user meets it: the built gateway on the embedded SQLite store, its
// data directory on a 4 MB tmpfs that fills up. While full, readiness (`/api/v1/health`) is 503
// with the store's check down, and model calls are 503 with Retry-After, charged nothing; once
// space returns, both serve again within 5 s without a restart; every 200 is in the ledger.

const disk = SmallDisk.mount("reliability-full-disk")
if (disk === undefined) console.warn("reliability full disk: skipped (this machine does not let the test mount a tmpfs: it needs Linux and the right to mount)")

describe.skipIf(disk === undefined)("reliability: the built gateway on a full disk", () => {
  let upstream: FakeUpstream.FakeServer
  beforeAll(async () => {
    upstream = await FakeOpenAi.start()
  })
  afterAll(async () => {
    await upstream?.close()
    if (disk !== undefined) {
      SmallDisk.unmount(disk)
    }
  })

  it("health 503 and model calls 503 + Retry-After while full, none charged; both 200 again within 5 s of space returning", async () => {
    const dataDir = NodePath.join(disk!, "data")
    const configDir = tempDir("reliability-full-disk-config")
    const configPath = NodePath.join(configDir, "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [provider("alpha", upstream.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1.5" } })])]
    }))
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const apiKey = KeySecret.generate()
    const gateway = launch({
      SWITCHYARD_HOST: "127.0.0.1",
      SWITCHYARD_PORT: String(port),
      DATABASE_URL: "",
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_CONFIG: configPath,
      ALPHA_API_KEY: "sk-fake",
      SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: KeySecret.generate(),
      SWITCHYARD_RATE_LIMIT: "off",
      SWITCHYARD_LOG_FORMAT: "json",
      SWITCHYARD_LOG_LEVEL: "info"
    })
    let filler: string | undefined
    try {
      await healthy(gateway, origin)
      const embed = async (i: number) => {
        const response = await fetch(`${origin}/api/v1/embeddings`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "acme/embed", input: [`request ${i} `.repeat(20)] }),
          signal: AbortSignal.timeout(10_000)
        })
        const body = await response.json() as any
        return {
          status: response.status,
          retryAfter: response.headers.get("retry-after"),
          generationId: response.headers.get("x-generation-id"),
          cost: response.status === 200 ? nanosFromCredits(body.usage.cost)! : 0n
        }
      }
      const health = async () => {
        const response = await fetch(`${origin}/api/v1/health`, { signal: AbortSignal.timeout(10_000) })
        const body = await response.json() as any
        return { status: response.status, store: (body.checks ?? body.error?.metadata?.checks)?.store?.status as string | undefined }
      }

      assert.deepStrictEqual(await health(), { status: 200, store: "up" })
      const served: Array<Awaited<ReturnType<typeof embed>>> = []
      for (let i = 0; i < 5; i++) served.push(await embed(i))
      assert.deepStrictEqual(served.map((r) => r.status), [200, 200, 200, 200, 200])

      filler = SmallDisk.fill(disk!)
      const filledAt = performance.now()
      // Readiness fails with the store's check down, before any model call has met the full disk.
      const healthWhileFull = await health()
      const whileFull: Array<Awaited<ReturnType<typeof embed>>> = []
      for (let i = 0; i < 400 && !whileFull.some((r) => r.status === 503); i++) whileFull.push(await embed(100 + i))
      for (let i = 0; i < 5; i++) whileFull.push(await embed(600 + i))
      const healthAfterCalls = await health()
      const refused = whileFull.filter((r) => r.status !== 200)

      Fs.rmSync(filler)
      filler = undefined
      const freedAt = performance.now()
      const freeAfter = (() => {
        const stats = Fs.statfsSync(disk!)
        return stats.bavail * stats.bsize
      })()
      let healthBack: number | undefined
      let callBack: Awaited<ReturnType<typeof embed>> | undefined
      while (performance.now() - freedAt < 5_000 && (healthBack === undefined || callBack === undefined)) {
        if (healthBack === undefined && (await health()).status === 200) healthBack = performance.now() - freedAt
        if (callBack === undefined) {
          const r = await embed(900)
          if (r.status === 200) callBack = r
        }
        if (healthBack === undefined || callBack === undefined) await sleep(100)
      }
      const callBackMs = callBack === undefined ? undefined : performance.now() - freedAt

      gateway.child.kill("SIGTERM")
      const exit = await gateway.exited
      const delivered = [...served, ...whileFull, ...(callBack === undefined ? [] : [callBack])].filter((r) => r.status === 200)
      const db = new DatabaseSync(NodePath.join(dataDir, "switchyard.db"), { readOnly: true })
      const ledger = new Map(
        (db.prepare("SELECT generation_id, CAST(cost_nanos AS text) AS cost FROM ledger").all() as Array<{ generation_id: string; cost: string }>)
          .map((r) => [r.generation_id, BigInt(r.cost)])
      )
      const usage = BigInt((db.prepare("SELECT CAST(COALESCE(SUM(usage_nanos), 0) AS text) AS usage FROM credit_accounts").get() as { usage: string }).usage)
      db.close()
      const figures = {
        served_before: served.length,
        health_while_full: healthWhileFull,
        health_after_calls: healthAfterCalls,
        calls_while_full: whileFull.length,
        refused_while_full: refused.length,
        ok_while_full: whileFull.length - refused.length,
        full_for_ms: Math.round(freedAt - filledAt),
        health_back_ms: healthBack === undefined ? undefined : Math.round(healthBack),
        call_back_ms: callBackMs === undefined ? undefined : Math.round(callBackMs),
        free_after_freeing_mb: Math.round(freeAfter / 1024 / 102.4) / 10,
        ledger_rows: ledger.size,
        ok_total: delivered.length
      }
      console.log(`full disk (built gateway): ${JSON.stringify(figures)}`)
      record("full-disk", { requests: served.length + whileFull.length + 1, faultsInjected: 1 })

      assert.deepStrictEqual(healthWhileFull, { status: 503, store: "down" }, JSON.stringify(figures))
      assert.deepStrictEqual(healthAfterCalls, { status: 503, store: "down" }, JSON.stringify(figures))
      assert.isAbove(refused.length, 0, JSON.stringify(figures))
      for (const r of refused) {
        assert.strictEqual(r.status, 503, JSON.stringify(figures))
        assert.strictEqual(r.retryAfter, "1", JSON.stringify(figures))
      }
      assert.isDefined(figures.health_back_ms, `ready again within 5 s of space returning: ${JSON.stringify(figures)}`)
      assert.isDefined(figures.call_back_ms, `serving again within 5 s of space returning: ${JSON.stringify(figures)}`)
      assert.deepStrictEqual(exit, { code: 0, signal: null }, gateway.stderr())
      // Every 200 is in the ledger with its cost; nothing refused was charged.
      for (const r of delivered) assert.strictEqual(ledger.get(r.generationId!), r.cost, `the 200 ${r.generationId}`)
      assert.strictEqual(ledger.size, delivered.length, JSON.stringify(figures))
      assert.strictEqual(usage, delivered.reduce((n, r) => n + r.cost, 0n))
    } finally {
      if (filler !== undefined) Fs.rmSync(filler, { force: true })
      await gateway.stop()
      Fs.rmSync(dataDir, { recursive: true, force: true })
      Fs.rmSync(configDir, { recursive: true, force: true })
    }
  }, 240_000)
})
