import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import OpenAI, { toFile } from "openai"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

const ledger = (gateway: Gateway) =>
  gateway.server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ readonly generation_id: string; readonly cost_nanos: string | number }>`SELECT generation_id, cost_nanos FROM ledger`
  }))

const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean, timeoutMs = 30_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`not done in time: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const jsonLines = (text: string) => text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))

const input = (count: number) =>
  Array.from({ length: count }, (_, i) =>
    JSON.stringify({ custom_id: `c${i}`, method: "POST", url: "/v1/embeddings", body: { model: "acme/embed", input: `text number ${i}` } }))
    .join("\n")

const config = (url: string) => ({
  providers: [provider("alpha", url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" } })])]
})

const env = {
  SWITCHYARD_BATCH_POLL_MS: "100",
  SWITCHYARD_BATCH_UNIT_LINES: "4",
  SWITCHYARD_BATCH_LINE_CONCURRENCY: "2",
  SWITCHYARD_BATCH_WORKERS: "1",
  SWITCHYARD_BATCH_LEASE_MS: "3000"
}

describe("batches across a restart and a cancel", () => {
  let alpha: FakeUpstream.FakeServer
  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
  })
  afterAll(async () => {
    await alpha?.close()
  })

  it("a gateway stopped mid-batch and started again on the same store completes it: every line once, none charged twice", async () => {
    alpha.setBehaviour({ _tag: "Delay", ms: 40 })
    const keys = { apiKey: KeySecret.generate(), managementKey: KeySecret.generate() }
    const dataDir = tempDir("batches")
    const databaseUrl = storeKind === "postgres" ? await freshDatabase() : undefined
    const same = { dataDir, keys, ...(databaseUrl !== undefined ? { databaseUrl } : {}) }
    try {
      const first = await startGateway({ config: config(alpha.url), credits: 10, env, ...same })
      const client = new OpenAI({ apiKey: keys.apiKey, baseURL: first.server.baseUrl, maxRetries: 0 })
      const file = await client.files.create({ file: await toFile(Buffer.from(input(60)), "corpus.jsonl"), purpose: "batch" })
      const batch = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
      const midway = await until(() => client.batches.retrieve(batch.id), (b) => (b.request_counts?.completed ?? 0) >= 12)
      await first.close()
      assert.isBelow(midway.request_counts!.completed, 60)

      const second = await startGateway({ config: config(alpha.url), env, ...same })
      try {
        const again = new OpenAI({ apiKey: keys.apiKey, baseURL: second.server.baseUrl, maxRetries: 0 })
        const done = await until(() => again.batches.retrieve(batch.id), (b) => b.status === "completed")
        assert.deepStrictEqual(done.request_counts, { total: 60, completed: 60, failed: 0 })
        const output = jsonLines(await (await again.files.content(done.output_file_id!)).text())
        assert.strictEqual(output.length, 60)
        assert.sameMembers(output.map((o) => o.custom_id), Array.from({ length: 60 }, (_, i) => `c${i}`))
        assert.isNull(done.error_file_id)
        const rows = await ledger(second)
        assert.sameMembers(rows.map((r) => r.generation_id), output.map((o) => o.response.request_id))
        const ledgerNanos = rows.reduce((n, r) => n + BigInt(r.cost_nanos), 0n)
        const lineNanos = output.reduce((n, o) => n + BigInt(Math.round(o.response.body.usage.cost * 1e9)), 0n)
        assert.strictEqual(ledgerNanos, lineNanos)
        const credits = await second.call("/credits", undefined, { key: keys.managementKey })
        assert.strictEqual(BigInt(Math.round(credits.json.data.total_usage * 1e9)), ledgerNanos)

        // As if every line had been served and the process had died before any checkpoint: the
        // lines run again (the upstream is called again) and settle as the same generations.
        const calls = alpha.requests.length
        await second.server.run(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE batch_units SET status = 'pending', claimed_by = NULL, claimed_until = NULL WHERE batch_id = ${batch.id}`
          yield* sql`UPDATE batches SET status = 'in_progress', completed = 0, failed = 0, output_file_id = ${done.output_file_id!}
            WHERE id = ${batch.id}`
          yield* sql`DELETE FROM batch_file_chunks WHERE file_id = ${done.output_file_id!}`
          yield* sql`DELETE FROM batch_files WHERE id = ${done.output_file_id!}`
        }))
        const rerun = await until(() => again.batches.retrieve(batch.id), (b) => b.status === "completed")
        assert.deepStrictEqual(rerun.request_counts, { total: 60, completed: 60, failed: 0 })
        const inputs = alpha.requests.slice(calls).reduce((n, r) => n + ((r.body as { input: Array<string> }).input.length), 0)
        assert.strictEqual(inputs, 60)
        const output2 = jsonLines(await (await again.files.content(rerun.output_file_id!)).text())
        assert.sameMembers(output2.map((o) => o.response.request_id), output.map((o) => o.response.request_id))
        assert.strictEqual((await ledger(second)).length, 60)
        const after = await second.call("/credits", undefined, { key: keys.managementKey })
        assert.strictEqual(after.json.data.total_usage, credits.json.data.total_usage)
      } finally {
        await second.close()
      }
    } finally {
      alpha.setBehaviour({ _tag: "Normal" })
      if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
    }
  })

  it("cancel stops a running batch within 5 s; only the lines served are charged, and they are in its output", async () => {
    alpha.setBehaviour({ _tag: "Delay", ms: 200 })
    const gateway = await startGateway({ config: config(alpha.url), credits: 10, env })
    try {
      const client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
      const file = await client.files.create({ file: await toFile(Buffer.from(input(80)), "corpus.jsonl"), purpose: "batch" })
      const batch = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
      await until(() => client.batches.retrieve(batch.id), (b) => (b.request_counts?.completed ?? 0) >= 4)
      const asked = Date.now()
      const cancelling = await client.batches.cancel(batch.id)
      assert.strictEqual(cancelling.status, "cancelling")
      const cancelled = await until(() => client.batches.retrieve(batch.id), (b) => b.status === "cancelled", 5_000)
      assert.isBelow(Date.now() - asked, 5_000)
      assert.isNumber(cancelled.cancelled_at)
      const served = cancelled.request_counts!.completed
      assert.isBelow(served, 80)
      const calls = alpha.requests.length
      await new Promise((resolve) => setTimeout(resolve, 500))
      assert.strictEqual(alpha.requests.length, calls)
      const output = jsonLines(await (await client.files.content(cancelled.output_file_id!)).text())
      assert.strictEqual(output.length, served)
      const rows = await ledger(gateway)
      assert.sameMembers(rows.map((r) => r.generation_id), output.map((o) => o.response.request_id))
    } finally {
      alpha.setBehaviour({ _tag: "Normal" })
      await gateway.close()
    }
  })

  it("files expire after the retention: their content answers 404 saying so, and the listing leaves them out", async () => {
    const gateway = await startGateway({ config: config(alpha.url), credits: 10, env: { ...env, SWITCHYARD_BATCH_RETENTION: "2 seconds" } })
    try {
      const client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
      const file = await client.files.create({ file: await toFile(Buffer.from(input(3)), "small.jsonl"), purpose: "batch" })
      const batch = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
      const done = await until(() => client.batches.retrieve(batch.id), (b) => b.status === "completed")
      assert.strictEqual((await (await client.files.content(done.output_file_id!)).text()).trim().split("\n").length, 3)
      const expired = await until(
        () => client.files.content(done.output_file_id!).then(() => undefined, (e: unknown) => e),
        (e) => e !== undefined,
        10_000
      )
      assert.instanceOf(expired, OpenAI.NotFoundError)
      assert.include((expired as Error).message, "expired")
      assert.instanceOf(await client.files.retrieve(file.id).then(() => undefined, (e: unknown) => e), OpenAI.NotFoundError)
      assert.notInclude((await client.files.list()).data.map((f) => f.id), done.output_file_id)
      const rows = await gateway.server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly n: number | string }>`SELECT COUNT(*) AS n FROM batch_file_chunks`
      }))
      assert.strictEqual(Number(rows[0]!.n), 0)
    } finally {
      await gateway.close()
    }
  })

  it("a batch whose 24 h window passes while it runs is expired: the lines run are in the output, the rest are batch_expired error lines, none charged", async () => {
    alpha.setBehaviour({ _tag: "Delay", ms: 40 })
    const keys = { apiKey: KeySecret.generate(), managementKey: KeySecret.generate() }
    const databaseUrl = storeKind === "postgres" ? await freshDatabase() : undefined
    try {
      const gateway = await startGateway({ config: config(alpha.url), credits: 10, env, keys, ...(databaseUrl !== undefined ? { databaseUrl } : {}) })
      try {
        const client = new OpenAI({ apiKey: keys.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
        const file = await client.files.create({ file: await toFile(Buffer.from(input(60)), "corpus.jsonl"), purpose: "batch" })
        const batch = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
        assert.strictEqual(batch.expires_at, batch.created_at + 24 * 3600)
        await until(() => client.batches.retrieve(batch.id), (b) => (b.request_counts?.completed ?? 0) >= 8)
        // The window passes: its end moved to the past, as 24 h of waiting would.
        await gateway.server.run(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE batches SET expires_at = ${Date.now() - 1} WHERE id = ${batch.id}`
        }))
        const expired = await until(() => client.batches.retrieve(batch.id), (b) => b.status !== "in_progress", 30_000)
        assert.strictEqual(expired.status, "expired")
        assert.isNumber(expired.expired_at)
        assert.isNull(expired.completed_at)
        const counts = expired.request_counts!
        assert.strictEqual(counts.total, 60)
        assert.strictEqual(counts.completed + counts.failed, 60)
        assert.isAtLeast(counts.completed, 8)
        assert.isAbove(counts.failed, 0, "the window passed before every line ran")
        const output = jsonLines(await (await client.files.content(expired.output_file_id!)).text())
        const errors = jsonLines(await (await client.files.content(expired.error_file_id!)).text())
        assert.strictEqual(output.length, counts.completed)
        assert.strictEqual(errors.length, counts.failed)
        for (const e of errors) assert.strictEqual(e.error.code, "batch_expired")
        const ids = [...output, ...errors].map((o) => o.custom_id)
        assert.strictEqual(new Set(ids).size, 60)
        assert.sameMembers(ids, Array.from({ length: 60 }, (_, i) => `c${i}`))
        // Only the lines run are charged.
        assert.strictEqual((await ledger(gateway)).length, counts.completed)
      } finally {
        await gateway.close()
      }
    } finally {
      if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
    }
  })
})
