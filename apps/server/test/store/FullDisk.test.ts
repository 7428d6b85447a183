import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { capturingStdout } from "../support/CapturedOutput.ts"
import * as SmallDisk from "../support/SmallDisk.ts"
import { startServer, storeKind, tempDir } from "../support/TestServer.ts"

const disk = storeKind === "sqlite" ? SmallDisk.mount("full-disk") : undefined
if (disk === undefined) {
  console.warn("full disk: skipped (the embedded store is not under test, or this machine does not let the test mount a tmpfs)")
}

describe.skipIf(disk === undefined)("the embedded store on a full disk", () => {
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

  it("answers 503 with Retry-After and charges nothing while full, says so once, and serves again when space returns", async () => {
    const configDir = tempDir("full-disk-config")
    const configPath = NodePath.join(configDir, "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [provider("alpha", upstream.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1.5" } })])]
    }))
    await capturingStdout(async (linesSoFar) => {
    const server = await startServer({
      dataDir: NodePath.join(disk!, "data"),
      env: { SWITCHYARD_CONFIG: configPath, ALPHA_API_KEY: "sk-fake", SWITCHYARD_RATE_LIMIT: "off", SWITCHYARD_LOG_LEVEL: "info" }
    })
    let filler: string | undefined
    try {
      const embed = async (i: number) => {
        const response = await fetch(`${server.baseUrl}/embeddings`, {
          method: "POST",
          headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
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
        const response = await fetch(`${server.baseUrl}/health`, { signal: AbortSignal.timeout(10_000) })
        const body = await response.json() as any
        return { status: response.status, store: (body.checks ?? body.error?.metadata?.checks)?.store?.status as string | undefined }
      }
      assert.deepStrictEqual(await health(), { status: 200, store: "up" })
      const served: Array<Awaited<ReturnType<typeof embed>>> = []
      for (let i = 0; i < 5; i++) served.push(await embed(i))
      assert.deepStrictEqual(served.map((r) => r.status), [200, 200, 200, 200, 200])

      filler = SmallDisk.fill(disk!)
      const whileFull: Array<Awaited<ReturnType<typeof embed>>> = []
      for (let i = 0; i < 400 && !whileFull.some((r) => r.status === 503); i++) whileFull.push(await embed(100 + i))
      const refused = whileFull.filter((r) => r.status !== 200)
      assert.isAbove(refused.length, 0, "a write failed for space")
      for (const r of refused) {
        assert.strictEqual(r.status, 503)
        assert.strictEqual(r.retryAfter, "1")
      }
      // More refusals while full: one error line in all, naming the disk's file.
      for (let i = 0; i < 5; i++) assert.strictEqual((await embed(600 + i)).status, 503)
      const fullLines = linesSoFar().map((line) => JSON.stringify(line)).filter((line) => line.includes("the disk is full"))
      assert.strictEqual(fullLines.length, 1, JSON.stringify(linesSoFar()))
      assert.include(fullLines[0]!, NodePath.join(disk!, "data", "switchyard.db"))

      // Readiness says so while the disk is full: a load balancer sends the traffic elsewhere.
      assert.deepStrictEqual(await health(), { status: 503, store: "down" })
      assert.deepStrictEqual(await health(), { status: 503, store: "down" })

      Fs.rmSync(filler)
      filler = undefined
      let back: Awaited<ReturnType<typeof embed>> | undefined
      const freedAt = Date.now()
      while (Date.now() - freedAt < 5_000) {
        back = await embed(900)
        if (back.status === 200) break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.strictEqual(back?.status, 200, "serving again within 5 s of space returning")
      assert.deepStrictEqual(await health(), { status: 200, store: "up" }, "ready again, without a restart")
      assert.isBelow(Date.now() - freedAt, 5_000, "ready again within 5 s of space returning")

      // Every 200 is in the ledger with its cost; nothing refused was charged.
      const delivered = [...served, ...whileFull, back!].filter((r) => r.status === 200)
      const books = await server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ generation_id: string; cost: string }>`SELECT generation_id, CAST(cost_nanos AS text) AS cost FROM ledger`
        const account = yield* sql<{ usage: string }>`SELECT CAST(COALESCE(SUM(usage_nanos), 0) AS text) AS usage FROM credit_accounts`
        return { rows, usage: BigInt(account[0]!.usage) }
      }))
      const ledger = new Map(books.rows.map((r) => [r.generation_id, BigInt(r.cost)]))
      for (const r of delivered) assert.strictEqual(ledger.get(r.generationId!), r.cost, `the 200 ${r.generationId}`)
      assert.strictEqual(books.rows.length, delivered.length)
      assert.strictEqual(books.usage, delivered.reduce((n, r) => n + r.cost, 0n))
    } finally {
      if (filler !== undefined) Fs.rmSync(filler, { force: true })
      await server.close()
      Fs.rmSync(NodePath.join(disk!, "data"), { recursive: true, force: true })
      Fs.rmSync(configDir, { recursive: true, force: true })
    }
    })
  }, 120_000)
})
