import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import OpenAI, { toFile } from "openai"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { endpoint, provider, startGateway } from "../embeddings/Gateway.ts"
import { dropDatabase, freshDatabase, storeKind } from "../support/TestServer.ts"

const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean, timeoutMs = 60_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`not done in time: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const input = (count: number) =>
  Array.from({ length: count }, (_, i) =>
    JSON.stringify({ custom_id: `c${i}`, method: "POST", url: "/v1/embeddings", body: { model: "acme/embed", input: `text number ${i}` } }))
    .join("\n")

const env = {
  SWITCHYARD_BATCH_POLL_MS: "100",
  SWITCHYARD_BATCH_UNIT_LINES: "4",
  SWITCHYARD_BATCH_WORKERS: "1",
  SWITCHYARD_BATCH_LEASE_MS: "2000"
}

describe.skipIf(storeKind !== "postgres")("batches on two replicas sharing PostgreSQL", () => {
  let alpha: FakeUpstream.FakeServer
  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
  })
  afterAll(async () => {
    await alpha?.close()
  })

  it("both replicas run a batch's units; a claim of a process the store has not seen alive is taken again at once; one replica stops and the other finishes", async () => {
    alpha.setBehaviour({ _tag: "Delay", ms: 30 })
    const keys = { apiKey: KeySecret.generate(), managementKey: KeySecret.generate() }
    const databaseUrl = await freshDatabase()
    const config = { providers: [provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" } })])] }
    try {
      const a = await startGateway({ config, credits: 10, env, databaseUrl, keys })
      const b = await startGateway({ config, env, databaseUrl, keys })
      try {
        const client = new OpenAI({ apiKey: keys.apiKey, baseURL: a.server.baseUrl, maxRetries: 0 })
        const file = await client.files.create({ file: await toFile(Buffer.from(input(80)), "corpus.jsonl"), purpose: "batch" })
        const batch = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
        await until(() => client.batches.retrieve(batch.id), (x) => (x.request_counts?.completed ?? 0) >= 8)
        // A replica that claimed the last unit and died long ago: no heartbeat row in gateway_processes.
        await b.server.run(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE batch_units SET status = 'running', claimed_by = 'dead-replica', claimed_until = ${Date.now() + 1_500}
            WHERE batch_id = ${batch.id} AND seq = (SELECT MAX(seq) FROM batch_units WHERE batch_id = ${batch.id})`
        }))
        await a.close()
        const other = new OpenAI({ apiKey: keys.apiKey, baseURL: b.server.baseUrl, maxRetries: 0 })
        const done = await until(() => other.batches.retrieve(batch.id), (x) => x.status === "completed")
        assert.deepStrictEqual(done.request_counts, { total: 80, completed: 80, failed: 0 })
        const output = (await (await other.files.content(done.output_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l))
        assert.sameMembers(output.map((o) => o.custom_id), Array.from({ length: 80 }, (_, i) => `c${i}`))
        const { owners, rows } = await b.server.run(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const owners = yield* sql<{ readonly claimed_by: string }>`SELECT DISTINCT claimed_by FROM batch_units WHERE batch_id = ${batch.id}`
          const rows = yield* sql<{ readonly n: string | number; readonly nanos: string | number }>`SELECT COUNT(*) AS n, SUM(cost_nanos) AS nanos FROM ledger`
          return { owners: owners.map((o) => o.claimed_by), rows: rows[0]! }
        }))
        assert.isAtLeast(owners.length, 2)
        assert.notInclude(owners, "dead-replica")
        assert.strictEqual(Number(rows.n), 80)
        const lineNanos = output.reduce((n, o) => n + BigInt(Math.round(o.response.body.usage.cost * 1e9)), 0n)
        assert.strictEqual(BigInt(rows.nanos), lineNanos)
      } finally {
        await b.close()
        await a.close().catch(() => undefined)
      }
    } finally {
      alpha.setBehaviour({ _tag: "Normal" })
      await dropDatabase(databaseUrl)
    }
  })
})
