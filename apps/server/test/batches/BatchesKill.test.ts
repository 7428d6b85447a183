import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { toFile } from "openai"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { batchInput, booksOnPostgres, booksOnSqlite, type Gateway, gateways, kill, until } from "../support/BatchGateways.ts"
import { dropDatabase, freshDatabase, postgresReachable, tempDir } from "../support/TestServer.ts"

// kill -9 of the built gateway (`node dist/main.mjs`) in the middle of a batch: on the embedded
// store the next start on the same data directory finishes it; on PostgreSQL the other replica
// does once the dead one's claim lapses. Either way every line is in the output once and charged once.

const lines = 3_000
const pgReachable = await postgresReachable()
const { start, killAll, topUp, activity } = gateways({})

const configFile = (upstreamUrl: string) => {
  const path = NodePath.join(tempDir("config"), "switchyard.json")
  Fs.writeFileSync(path, JSON.stringify({
    providers: [provider("alpha", upstreamUrl, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1.5" } })])]
  }))
  return path
}

/** Starts a batch of `lines` lines and waits until some, not all, of its units are written. */
const startBatch = async (gateway: Gateway) => {
  await topUp(gateway)
  const file = await gateway.client.files.create({ file: await toFile(Buffer.from(batchInput(lines, "c")), "corpus.jsonl"), purpose: "batch" })
  const batch = await gateway.client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
  const midway = await until(() => gateway.client.batches.retrieve(batch.id), (b) => (b.request_counts?.completed ?? 0) > 0, 60_000)
  assert.isBelow(midway.request_counts!.completed, lines, "the batch was still running at the kill")
  return { batchId: batch.id, before: midway.request_counts!.completed }
}

/** The finished batch's output: every custom_id once, and the sum of its lines' costs. */
const finished = async (gateway: Gateway, batchId: string, timeoutMs: number) => {
  const done = await until(() => gateway.client.batches.retrieve(batchId), (b) => b.status === "completed", timeoutMs)
  assert.deepStrictEqual(done.request_counts, { total: lines, completed: lines, failed: 0 })
  const output = (await (await gateway.client.files.content(done.output_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l))
  assert.strictEqual(output.length, lines, "one output line per input line")
  const ids = output.map((o) => o.custom_id as string)
  assert.strictEqual(new Set(ids).size, lines, "no custom_id twice")
  assert.sameMembers(ids, Array.from({ length: lines }, (_, i) => `c${i}`))
  const lineNanos = output.reduce((n, o) => n + nanosFromCredits(o.response.body.usage.cost)!, 0n)
  const activityNanos = await activity(gateway, (usage) => nanosFromCredits(usage)!)
  // Each unit adds its lines' costs once, whoever ran it and however often it was claimed.
  // `cost` is Switchyard's field on the batch; the openai SDK does not type it.
  const cost: unknown = Reflect.get(done, "cost")
  assert.strictEqual(typeof cost === "number" ? nanosFromCredits(cost) : cost, lineNanos, "the batch's cost is its lines'")
  return { lineNanos, activityNanos }
}

describe("batches: kill -9 of the built gateway mid-batch", () => {
  let upstream: FakeUpstream.FakeServer
  beforeAll(async () => {
    upstream = await FakeOpenAi.start()
    // Slow enough that the kill lands while units are running.
    upstream.setBehaviour({ _tag: "Delay", ms: 250 })
  })
  afterAll(async () => {
    killAll()
    await upstream?.close()
  })

  it("embedded store: the next start on the same data directory completes the batch; every line once in the output, charged once", async () => {
    const dataDir = tempDir("batch-kill")
    // The embedded store, whatever DATABASE_URL the suite runs under.
    const env = { SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_CONFIG: configFile(upstream.url), DATABASE_URL: "" }
    const first = await start(env)
    const { batchId, before } = await startBatch(first)
    await kill(first)
    const killedAt = Date.now()
    const second = await start(env)
    // The dead process's claims go at the start (the embedded store is this process's alone), not after their lease.
    const { activityNanos, lineNanos } = await finished(second, batchId, 60_000)
    const finishedMs = Date.now() - killedAt
    assert.isBelow(finishedMs, 30_000, "sooner than the default claim lease (30 s)")
    await second.process.stop()
    const books = await booksOnSqlite(dataDir)
    assert.strictEqual(books.rows, lines, "one ledger row per served line")
    assert.strictEqual(books.distinct, lines)
    assert.strictEqual(books.nanos, lineNanos, "the ledger's sum is the output lines' costs")
    assert.strictEqual(activityNanos, lineNanos, "/activity's cost is the output lines' costs")
    console.log(`batch kill -9 (embedded): ${JSON.stringify({ lines, completedBeforeKill: before, finishedAfterKillMs: finishedMs })}`)
  }, 240_000)

  it.skipIf(!pgReachable)("PostgreSQL, two replicas: the survivor completes the batch once the dead replica's claims lapse", async () => {
    const databaseUrl = await freshDatabase()
    try {
      const leaseMs = 3_000
      const env = {
        DATABASE_URL: databaseUrl,
        SWITCHYARD_CONFIG: configFile(upstream.url),
        SWITCHYARD_DATA_DIR: tempDir("batch-kill-pg"),
        SWITCHYARD_BATCH_LEASE_MS: String(leaseMs)
      }
      const a = await start(env)
      const b = await start({ ...env, SWITCHYARD_DATA_DIR: tempDir("batch-kill-pg") })
      const { batchId, before } = await startBatch(a)
      await kill(a)
      const killedAt = Date.now()
      const { activityNanos, lineNanos } = await finished(b, batchId, 60_000)
      const finishedMs = Date.now() - killedAt
      assert.isBelow(finishedMs, leaseMs + 30_000, "bounded: the lease, then the remaining lines")
      const books = await booksOnPostgres(databaseUrl)
      await b.process.stop()
      assert.strictEqual(books.rows, lines, "one ledger row per served line")
      assert.strictEqual(books.distinct, lines)
      assert.strictEqual(books.nanos, lineNanos, "the ledger's sum is the output lines' costs")
      assert.strictEqual(activityNanos, lineNanos, "/activity's cost is the output lines' costs")
      console.log(`batch kill -9 (two replicas): ${JSON.stringify({ lines, completedBeforeKill: before, finishedAfterKillMs: finishedMs })}`)
    } finally {
      await dropDatabase(databaseUrl)
    }
  }, 240_000)
})
