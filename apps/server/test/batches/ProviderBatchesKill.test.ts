import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { toFile } from "openai"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAiBatch from "../fakes/FakeOpenAiBatch.ts"
import { batchInput, type Books, booksOnPostgres, booksOnSqlite, gateways, kill, until } from "../support/BatchGateways.ts"
import { dropDatabase, freshDatabase, postgresReachable, tempDir } from "../support/TestServer.ts"

// kill -9 of the built gateway (`node dist/main.mjs`) while its provider batches run at the
// provider: the next start on the same store polls the same provider batches (never submits them
// again), and every line is in the output once and charged once, at the batch price.

const lines = 200
const pgReachable = await postgresReachable()
const { start, killAll, topUp, activity } = gateways({ SWITCHYARD_PROVIDER_BATCH_POLL_MS: "200" })

const configFile = (upstreamUrl: string) => {
  const path = NodePath.join(tempDir("config"), "switchyard.json")
  Fs.writeFileSync(path, JSON.stringify({
    providers: [provider("alpha", upstreamUrl, { dialect: "openai" }, [
      endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1.5", batch: { prompt: "0.75" } } })
    ])]
  }))
  return path
}

describe("provider batches: kill -9 of the built gateway while they run", () => {
  let upstream: FakeOpenAiBatch.FakeBatchServer
  beforeAll(async () => {
    upstream = await FakeOpenAiBatch.start()
  })
  afterAll(async () => {
    killAll()
    await upstream?.close()
  })

  const scenario = async (env: Record<string, string>, readBack: () => Promise<Books>) => {
    upstream.pause(true)
    const before = upstream.batches.size
    const first = await start(env)
    await topUp(first)
    const file = await first.client.files.create({ file: await toFile(Buffer.from(batchInput(lines, "k")), "corpus.jsonl"), purpose: "batch" })
    const batch = await first.client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    // Units of 64: four provider batches, each submitted and polled (running at the provider).
    const units = Math.ceil(lines / 64)
    await until(() => [...upstream.batches.values()].slice(before).filter((b) => b.status === "in_progress").length, (n) => n === units, 60_000)
    await kill(first)
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
    const activityNanos = await activity(second, (usage) => nanosFromCredits(usage)!)
    await second.process.stop()
    const books = await readBack()
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
      () => booksOnSqlite(dataDir)
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
        () => booksOnPostgres(databaseUrl)
      )
    } finally {
      await dropDatabase(databaseUrl)
    }
  }, 240_000)
})
