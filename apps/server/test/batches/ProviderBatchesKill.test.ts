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
import * as FakeOpenAiBatch from "../fakes/FakeOpenAiBatch.ts"
import { type BundleProcess, healthy, launch } from "../support/BundleProcess.ts"
import { freePort } from "../support/ServerProcess.ts"
import { dropDatabase, freshDatabase, postgresReachable, tempDir } from "../support/TestServer.ts"

// kill -9 of the built gateway (`node dist/main.mjs`) while its provider batches run at the
// provider: the next start on the same store polls the same provider batches (never submits them
// again), and every line is in the output once and charged once, at the batch price.

const lines = 200
const pgReachable = await postgresReachable()
const apiKey = KeySecret.generate()
const managementKey = KeySecret.generate()

const input = () =>
  Array.from({ length: lines }, (_, i) =>
    JSON.stringify({ custom_id: `k${i}`, method: "POST", url: "/v1/embeddings", body: { model: "acme/embed", input: `line ${i} of the batch` } }))
    .join("\n")

const until = async <A>(read: () => Promise<A> | A, done: (a: A) => boolean, timeoutMs: number): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const started: Array<BundleProcess> = []

const start = async (env: Record<string, string>) => {
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
    SWITCHYARD_PROVIDER_BATCH_POLL_MS: "200",
    SWITCHYARD_BATCH_UNIT_LINES: "64",
    ...env
  })
  started.push(gateway)
  const origin = `http://127.0.0.1:${port}`
  await healthy(gateway, origin, 120_000)
  return { process: gateway, origin, client: new OpenAI({ apiKey, baseURL: `${origin}/api/v1`, maxRetries: 0 }) }
}

const configFile = (upstreamUrl: string) => {
  const path = NodePath.join(tempDir("config"), "switchyard.json")
  Fs.writeFileSync(path, JSON.stringify({
    providers: [provider("alpha", upstreamUrl, { dialect: "openai" }, [
      endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1.5", batch: { prompt: "0.75" } } })
    ])]
  }))
  return path
}

const readBooks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ n: number | string; d: number | string; nanos: string | null }>`SELECT COUNT(*) AS n,
    COUNT(DISTINCT generation_id) AS d, CAST(SUM(cost_nanos) AS text) AS nanos FROM ledger`
  return { rows: Number(rows[0]!.n), distinct: Number(rows[0]!.d), nanos: BigInt(rows[0]!.nanos ?? "0") }
})

describe("provider batches: kill -9 of the built gateway while they run", () => {
  let upstream: FakeOpenAiBatch.FakeBatchServer
  beforeAll(async () => {
    upstream = await FakeOpenAiBatch.start()
  })
  afterAll(async () => {
    for (const gateway of started) if (gateway.isRunning()) gateway.child.kill("SIGKILL")
    await upstream?.close()
  })

  const scenario = async (env: Record<string, string>, readBack: (books: typeof readBooks) => Promise<Effect.Success<typeof readBooks>>) => {
    upstream.pause(true)
    const before = upstream.batches.size
    const first = await start(env)
    const topUp = await fetch(`${first.origin}/api/v1/credits`, {
      method: "POST",
      headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: 1000 })
    })
    assert.strictEqual(topUp.status, 200)
    const file = await first.client.files.create({ file: await toFile(Buffer.from(input()), "corpus.jsonl"), purpose: "batch" })
    const batch = await first.client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    // Units of 64: four provider batches, each submitted and polled (running at the provider).
    const units = Math.ceil(lines / 64)
    await until(() => [...upstream.batches.values()].slice(before).filter((b) => b.status === "in_progress").length, (n) => n === units, 60_000)
    first.process.child.kill("SIGKILL")
    assert.strictEqual((await first.process.exited).signal, "SIGKILL")
    upstream.pause(false)
    const second = await start(env)
    const done = await until(() => second.client.batches.retrieve(batch.id), (b) => b.status === "completed", 60_000)
    assert.deepStrictEqual(done.request_counts, { total: lines, completed: lines, failed: 0 })
    assert.strictEqual(upstream.batches.size - before, units, "no provider batch submitted twice")
    const output = (await (await second.client.files.content(done.output_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l))
    const ids = output.map((o) => o.custom_id as string)
    assert.strictEqual(new Set(ids).size, lines)
    assert.sameMembers(ids, Array.from({ length: lines }, (_, i) => `k${i}`))
    const lineNanos = output.reduce((n, o) => n + nanosFromCredits(o.response.body.usage.cost)!, 0n)
    const activity = await fetch(`${second.origin}/api/v1/activity`, { headers: { authorization: `Bearer ${managementKey}` } })
    const activityNanos = ((await activity.json()) as { data: Array<{ usage: number }> }).data
      .reduce((n, item) => n + nanosFromCredits(item.usage)!, 0n)
    await second.process.stop()
    const books = await readBack(readBooks)
    assert.strictEqual(books.rows, lines, "one ledger row per served line")
    assert.strictEqual(books.distinct, lines)
    assert.strictEqual(books.nanos, lineNanos, "the ledger's sum is the output lines' costs")
    assert.strictEqual(activityNanos, lineNanos, "/activity's cost is the output lines' costs")
    // Charged at the batch price: half of the live 1.5 per million tokens.
    const tokens = output.reduce((n, o) => n + (o.response.body.usage.prompt_tokens as number), 0)
    assert.strictEqual(lineNanos, (BigInt(tokens) * 750_000_000n) / 1_000_000n)
  }

  it("embedded store: the next start polls the same provider batches; every line once, charged once", async () => {
    const dataDir = tempDir("provider-batch-kill")
    await scenario(
      // The embedded store, whatever DATABASE_URL the suite runs under.
      { SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_CONFIG: configFile(upstream.url), DATABASE_URL: "" },
      (books) =>
        Effect.runPromise(books.pipe(Effect.provide(SqliteClient.layer(NodePath.join(dataDir, "switchyard.db")))) as Effect.Effect<
          Effect.Success<typeof books>,
          unknown,
          never
        >)
    )
  }, 240_000)

  it.skipIf(!pgReachable)("PostgreSQL: a replica started after the kill polls them once the dead one's claims lapse", async () => {
    const databaseUrl = await freshDatabase()
    try {
      await scenario(
        {
          DATABASE_URL: databaseUrl,
          SWITCHYARD_CONFIG: configFile(upstream.url),
          SWITCHYARD_DATA_DIR: tempDir("provider-batch-kill-pg"),
          SWITCHYARD_BATCH_LEASE_MS: "3000"
        },
        (books) =>
          Effect.runPromise(
            books.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 }))) as Effect.Effect<
              Effect.Success<typeof books>,
              unknown,
              never
            >
          )
      )
    } finally {
      await dropDatabase(databaseUrl)
    }
  }, 240_000)
})
