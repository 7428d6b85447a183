import { PgClient } from "@effect/sql-pg"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import OpenAI, { toFile } from "openai"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as SqliteClient from "../../src/store/SqliteClient.ts"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { type BundleProcess, healthy, launch } from "../support/BundleProcess.ts"
import { freePort } from "../support/ServerProcess.ts"
import { dropDatabase, freshDatabase, postgresReachable, tempDir } from "../support/TestServer.ts"

// kill -9 of the built gateway (`node dist/main.mjs`) in the middle of a batch: on the embedded
// store the next start on the same data directory finishes it; on PostgreSQL the other replica
// does once the dead one's claim lapses. Either way every line is in the output once and charged once.

const lines = 3_000
const pgReachable = await postgresReachable()
const apiKey = KeySecret.generate()
const managementKey = KeySecret.generate()

const input = () =>
  Array.from({ length: lines }, (_, i) =>
    JSON.stringify({ custom_id: `c${i}`, method: "POST", url: "/v1/embeddings", body: { model: "acme/embed", input: `line ${i} of the batch` } }))
    .join("\n")

const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean, timeoutMs: number): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

interface Gateway {
  readonly process: BundleProcess
  readonly origin: string
  readonly client: OpenAI
}

const started: Array<BundleProcess> = []

const start = async (env: Record<string, string>): Promise<Gateway> => {
  const port = await freePort()
  const gateway = launch({
    SWITCHYARD_HOST: "127.0.0.1",
    SWITCHYARD_PORT: String(port),
    SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
    SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
    SWITCHYARD_RATE_LIMIT: "off",
    SWITCHYARD_LOG_LEVEL: "warn",
    ALPHA_API_KEY: "sk-fake",
    SWITCHYARD_BATCH_POLL_MS: "100",
    SWITCHYARD_BATCH_UNIT_LINES: "64",
    ...env
  })
  started.push(gateway)
  const origin = `http://127.0.0.1:${port}`
  await healthy(gateway, origin, 120_000)
  return { process: gateway, origin, client: new OpenAI({ apiKey, baseURL: `${origin}/api/v1`, maxRetries: 0 }) }
}

const kill = async (gateway: Gateway) => {
  gateway.process.child.kill("SIGKILL")
  const exit = await gateway.process.exited
  assert.strictEqual(exit.signal, "SIGKILL")
}

const configFile = (upstreamUrl: string) => {
  const path = NodePath.join(tempDir("config"), "switchyard.json")
  Fs.writeFileSync(path, JSON.stringify({
    providers: [provider("alpha", upstreamUrl, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1.5" } })])]
  }))
  return path
}

/** Starts a batch of `lines` lines and waits until some, not all, of its units are written. */
const startBatch = async (gateway: Gateway) => {
  const topUp = await fetch(`${gateway.origin}/api/v1/credits`, {
    method: "POST",
    headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json" },
    body: JSON.stringify({ amount: 1000 })
  })
  assert.strictEqual(topUp.status, 200)
  const file = await gateway.client.files.create({ file: await toFile(Buffer.from(input()), "corpus.jsonl"), purpose: "batch" })
  const batch = await gateway.client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
  const midway = await until(() => gateway.client.batches.retrieve(batch.id), (b) => (b.request_counts?.completed ?? 0) > 0, 60_000)
  assert.isBelow(midway.request_counts!.completed, lines, "the batch was still running at the kill")
  return { batchId: batch.id, before: midway.request_counts!.completed }
}

interface Books {
  readonly rows: number
  readonly distinct: number
  readonly nanos: bigint
}

const readBooks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ n: number | string; d: number | string; nanos: string | null }>`SELECT COUNT(*) AS n,
    COUNT(DISTINCT generation_id) AS d, CAST(SUM(cost_nanos) AS text) AS nanos FROM ledger`
  return { rows: Number(rows[0]!.n), distinct: Number(rows[0]!.d), nanos: BigInt(rows[0]!.nanos ?? "0") } satisfies Books
})

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
  const activity = await fetch(`${gateway.origin}/api/v1/activity`, { headers: { authorization: `Bearer ${managementKey}` } })
  const activityNanos = ((await activity.json()) as { data: Array<{ usage: number }> }).data
    .reduce((n, item) => n + nanosFromCredits(item.usage)!, 0n)
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
    for (const gateway of started) if (gateway.isRunning()) gateway.child.kill("SIGKILL")
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
    const books = await Effect.runPromise(
      readBooks.pipe(Effect.provide(SqliteClient.layer(NodePath.join(dataDir, "switchyard.db")))) as Effect.Effect<Books, unknown, never>
    )
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
      const books = await Effect.runPromise(
        readBooks.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 }))) as Effect.Effect<Books, unknown, never>
      )
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
