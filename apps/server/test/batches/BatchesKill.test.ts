import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { toFile } from "openai"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import {
  batchInput,
  booksOnPostgres,
  booksOnSqlite,
  type Claims,
  claimsOnPostgres,
  claimsOnSqlite,
  type Gateway,
  gateways,
  kill,
  until
} from "../support/BatchGateways.ts"
import { childrenOf } from "../support/ServerProcess.ts"
import { dropDatabase, freshDatabase, postgresReachable, tempDir } from "../support/TestServer.ts"

// kill -9 of the built gateway (`node dist/main.mjs`) in the middle of a batch: on the embedded
// store with one worker the next start on the same data directory finishes it; with two workers on
// one file, and with two replicas on PostgreSQL, the survivors take the dead process's units once
// it is judged dead (not seen for 30 s: GatewayProcesses). Every line is in the output once and
// charged once. `SWITCHYARD_TEST_BATCH_LINES` runs a bigger batch by hand (the 20,000).

const lines = Number(process.env.SWITCHYARD_TEST_BATCH_LINES ?? 3_000)
/** How long unseen before a process is judged dead, and how often each process is seen. */
const staleMs = 30_000
const heartbeatMs = 10_000
/** What the lines left at a kill take at most, beyond the time the dead process is judged dead in. */
const remainingMs = Math.max(30_000, lines * 10)
const testMs = Math.max(240_000, lines * 40)
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
  const midway = await until(() => gateway.client.batches.retrieve(batch.id), (b) => (b.request_counts?.completed ?? 0) > 0, remainingMs)
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

/**
 * The dead process's claims, read just after the kill and after the batch finished: it held units at
 * the kill, and none after it was judged dead; every one of them was run and written by another.
 */
const takenOver = (atKill: Claims, after: Claims, dead: string) => {
  const held = atKill.running.filter((unit) => unit.owner === dead)
  assert.isAbove(held.length, 0, "the killed process held units at the kill")
  assert.deepStrictEqual(after.running, [], "no unit is left claimed")
  for (const unit of held) {
    const now = after.units.find((u) => u.seq === unit.seq)
    assert.strictEqual(now?.status, "done")
    assert.notStrictEqual(now?.owner, dead, "run and written by a live process")
  }
  return held.length
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
  }, testMs)

  it.skipIf(!pgReachable)("PostgreSQL, two replicas: the survivor takes the killed replica's units once it is judged dead; every line once in the output, charged once", async () => {
    const databaseUrl = await freshDatabase()
    try {
      const env = { DATABASE_URL: databaseUrl, SWITCHYARD_CONFIG: configFile(upstream.url), SWITCHYARD_DATA_DIR: tempDir("batch-kill-pg") }
      const a = await start(env)
      const b = await start({ ...env, SWITCHYARD_DATA_DIR: tempDir("batch-kill-pg") })
      const { batchId, before } = await startBatch(a)
      await kill(a)
      const killedAt = Date.now()
      const atKill = await claimsOnPostgres(databaseUrl, batchId)
      const { activityNanos, lineNanos } = await finished(b, batchId, staleMs + heartbeatMs + 2 * remainingMs)
      const finishedMs = Date.now() - killedAt
      assert.isBelow(finishedMs, staleMs + heartbeatMs + remainingMs, "its units were taken once it was judged dead")
      const after = await claimsOnPostgres(databaseUrl, batchId)
      const dead = atKill.processes.filter((id) => !after.processes.includes(id))
      assert.strictEqual(dead.length, 1, "one replica died")
      const heldAtKill = takenOver(atKill, after, dead[0]!)
      const books = await booksOnPostgres(databaseUrl)
      await b.process.stop()
      assert.strictEqual(books.rows, lines, "one ledger row per served line")
      assert.strictEqual(books.distinct, lines)
      assert.strictEqual(books.nanos, lineNanos, "the ledger's sum is the output lines' costs")
      assert.strictEqual(activityNanos, lineNanos, "/activity's cost is the output lines' costs")
      console.log(`batch kill -9 (two replicas): ${JSON.stringify({ lines, completedBeforeKill: before, heldAtKill, finishedAfterKillMs: finishedMs })}`)
    } finally {
      await dropDatabase(databaseUrl)
    }
  }, testMs)

  it("embedded store, two workers: a worker killed mid-batch; the other takes its units once it is judged dead; every line once in the output, charged once", async () => {
    const dataDir = tempDir("batch-kill-workers")
    const env = { SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_CONFIG: configFile(upstream.url), DATABASE_URL: "", SWITCHYARD_WORKERS: "2" }
    const gateway = await start(env)
    await until(() => childrenOf(gateway.process.child.pid!).length, (n) => n === 2, 30_000)
    const { batchId, before } = await startBatch(gateway)
    // One worker goes (the primary starts another in its place, under a new id); what it held
    // stays claimed in its name until it is judged dead.
    process.kill(childrenOf(gateway.process.child.pid!)[0]!, "SIGKILL")
    const killedAt = Date.now()
    const atKill = await claimsOnSqlite(dataDir, batchId)
    const { activityNanos, lineNanos } = await finished(gateway, batchId, staleMs + heartbeatMs + 2 * remainingMs)
    const finishedMs = Date.now() - killedAt
    const after = await claimsOnSqlite(dataDir, batchId)
    await gateway.process.stop()
    // The killed worker's id: the one seen at the kill that is no longer alive.
    const dead = atKill.processes.filter((id) => !after.processes.includes(id))
    assert.strictEqual(dead.length, 1, "one process died")
    const heldAtKill = takenOver(atKill, after, dead[0]!)
    assert.isBelow(finishedMs, staleMs + heartbeatMs + remainingMs, "its units were taken once it was judged dead")
    const books = await booksOnSqlite(dataDir)
    assert.strictEqual(books.rows, lines, "one ledger row per served line")
    assert.strictEqual(books.distinct, lines)
    assert.strictEqual(books.nanos, lineNanos, "the ledger's sum is the output lines' costs")
    assert.strictEqual(activityNanos, lineNanos, "/activity's cost is the output lines' costs")
    console.log(`batch kill -9 (two workers): ${JSON.stringify({ lines, completedBeforeKill: before, heldAtKill, finishedAfterKillMs: finishedMs })}`)
  }, testMs)
})
