import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { creditsFromNanos, nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { type ServerProcess, startServerProcess } from "../support/ServerProcess.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

const tokens = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

const configFor = (url: string) => ({
  providers: [provider("alpha", url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1" }, input_modalities: ["text", "tokens"] })])]
})

const ledgerOf = (gateway: Gateway, hash: string) =>
  gateway.server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ total: string; n: number }>`SELECT CAST(COALESCE(SUM(l.cost_nanos), 0) AS text) AS total, CAST(count(l.generation_id) AS integer) AS n
      FROM api_keys k LEFT JOIN ledger l ON l.key_id = k.id WHERE k.hash = ${hash}`
    return { total: BigInt(rows[0]!.total), rows: rows[0]!.n }
  }))

describe(`embeddings billing (${storeKind})`, () => {
  let fake: FakeUpstream.FakeServer
  let gateway: Gateway
  beforeAll(async () => {
    fake = await FakeOpenAi.start()
    gateway = await startGateway({ config: configFor(fake.url), credits: 100 })
  })
  afterAll(async () => {
    await gateway.close()
    await fake.close()
  })

  const newKey = async (body: Record<string, unknown>) => {
    const created = await gateway.call("/keys", { name: "billing", ...body }, { key: gateway.server.managementKey })
    assert.strictEqual(created.status, 201, created.text)
    return { secret: created.json.key as string, hash: created.json.data.hash as string }
  }

  it("the key listing's usage rises by exactly the costs the embeddings responses reported", async () => {
    const key = await newKey({})
    const before = await gateway.call("/credits", undefined, { key: gateway.server.managementKey })
    let reported = 0n
    for (const input of ["one", "two words", "three more words", tokens(777), ["a b", "c d e f"]]) {
      const reply = await gateway.embed({ model: "acme/embed", input }, { key: key.secret })
      assert.strictEqual(reply.status, 200, reply.text)
      assert.isAbove(reply.json.usage.cost, 0)
      assert.isFalse(reply.json.usage.is_byok)
      reported += nanosFromCredits(reply.json.usage.cost)!
      const record = (await gateway.call(`/keys/${key.hash}`, undefined, { key: gateway.server.managementKey })).json.data
      assert.strictEqual(record.usage, creditsFromNanos(reported))
      assert.strictEqual(record.usage_daily, creditsFromNanos(reported))
    }
    assert.strictEqual((await ledgerOf(gateway, key.hash)).total, reported)
    const after = await gateway.call("/credits", undefined, { key: gateway.server.managementKey })
    assert.strictEqual(
      nanosFromCredits(after.json.data.total_usage)! - nanosFromCredits(before.json.data.total_usage)!,
      reported
    )
  })

  it("200 concurrent requests on a key that can afford 50: 50 succeed, 150 get 402 naming the key limit", async () => {
    const key = await newKey({ limit: 0.05 })
    const replies = await Promise.all(Array.from({ length: 200 }, () =>
      gateway.embed({ model: "acme/embed", input: tokens(1000) }, { key: key.secret })
    ))
    const ok = replies.filter((r) => r.status === 200)
    const refused = replies.filter((r) => r.status === 402)
    assert.strictEqual(ok.length, 50)
    assert.strictEqual(refused.length, 150)
    for (const r of refused) {
      assert.strictEqual(r.json.error.code, 402)
      assert.include(r.json.error.message, "key limit")
    }
    const reported = ok.reduce((sum, r) => sum + nanosFromCredits(r.json.usage.cost)!, 0n)
    const ledger = await ledgerOf(gateway, key.hash)
    assert.strictEqual(ledger.rows, 50)
    assert.strictEqual(ledger.total, reported)
    assert.strictEqual(ledger.total, 50_000_000n)
    const record = (await gateway.call(`/keys/${key.hash}`, undefined, { key: gateway.server.managementKey })).json.data
    assert.strictEqual(record.usage, 0.05)
    assert.strictEqual(record.limit_remaining, 0)
  })

  it("GET /key shows the calling key's limit falling as it spends", async () => {
    const key = await newKey({ limit: 0.01, limit_reset: "daily" })
    assert.strictEqual((await gateway.embed({ model: "acme/embed", input: tokens(2500) }, { key: key.secret })).status, 200)
    const own = await gateway.call("/key", undefined, { key: key.secret })
    assert.strictEqual(own.json.data.usage, 0.0025)
    assert.strictEqual(own.json.data.limit_remaining, 0.0075)
  })
})

describe(`a fresh install's credits (${storeKind})`, () => {
  it("with no credits, a paid model is served and billed exactly; the first credit grant makes the balance stop spending", async () => {
    const fake = await FakeOpenAi.start()
    const gateway = await startGateway({ config: configFor(fake.url) })
    try {
      const paid = await gateway.embed({ model: "acme/embed", input: tokens(1000) })
      assert.strictEqual(paid.status, 200, paid.text)
      assert.strictEqual(paid.json.usage.cost, 0.001)
      const credits = await gateway.call("/credits", undefined, { key: gateway.server.managementKey })
      assert.deepStrictEqual(credits.json.data, { total_credits: 0, total_usage: 0.001 })
      const free = await gateway.embed({ model: "switchyard/local-embed", input: "hello" })
      assert.strictEqual(free.status, 200, free.text)
      assert.strictEqual(free.json.usage.cost, 0)

      // 0.0015 granted, 0.001 spent: 0.0005 left, less than 1000 tokens at $1 per million.
      const grant = await gateway.call("/credits", { amount: "0.0015" }, { key: gateway.server.managementKey })
      assert.strictEqual(grant.status, 200, grant.text)
      const sent = fake.requests.length
      const refused = await gateway.embed({ model: "acme/embed", input: tokens(1000) })
      assert.strictEqual(refused.status, 402, refused.text)
      assert.strictEqual(refused.json.error.code, 402)
      assert.strictEqual(refused.json.error.metadata.reason, "workspace_credits")
      assert.include(refused.json.error.message, "workspace credits")
      assert.strictEqual(fake.requests.length, sent)
      const fits = await gateway.embed({ model: "acme/embed", input: tokens(500) })
      assert.strictEqual(fits.status, 200, fits.text)
    } finally {
      await gateway.close()
      await fake.close()
    }
  })
})

describe.skipIf(storeKind !== "postgres")("embeddings billing across two server processes on one PostgreSQL", () => {
  it("200 concurrent requests split over two replicas on a key that can afford 50: 50 succeed", async () => {
    const fake = await FakeOpenAi.start()
    const databaseUrl = await freshDatabase()
    const configPath = NodePath.join(tempDir("config"), "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify(configFor(fake.url)))
    const apiKey = KeySecret.generate()
    const managementKey = KeySecret.generate()
    const env = () => ({
      DATABASE_URL: databaseUrl,
      SWITCHYARD_DATA_DIR: tempDir("replica"),
      SWITCHYARD_CONFIG: configPath,
      SWITCHYARD_RATE_LIMIT: "off",
      SWITCHYARD_SECRET_KEY: "a".repeat(64),
      ALPHA_API_KEY: "sk-fake",
      SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey
    })
    const replicas: Array<ServerProcess> = []
    try {
      replicas.push(await startServerProcess(env()))
      replicas.push(await startServerProcess(env()))
      const call = (i: number, path: string, body: unknown, key: string) =>
        fetch(`${replicas[i % 2]!.baseUrl}${path}`, {
          method: body === undefined ? "GET" : "POST",
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        }).then(async (r) => ({ status: r.status, json: await r.json() as any }))
      assert.strictEqual((await call(0, "/credits", { amount: 10 }, managementKey)).status, 200)
      const created = await call(1, "/keys", { name: "shared", limit: 0.05 }, managementKey)
      const secret = created.json.key as string
      const replies = await Promise.all(Array.from({ length: 200 }, (_, i) =>
        call(i, "/embeddings", { model: "acme/embed", input: tokens(1000) }, secret).then((r) => ({ ...r, replica: i % 2 }))
      ))
      assert.strictEqual(replies.filter((r) => r.status === 200).length, 50)
      assert.strictEqual(replies.filter((r) => r.status === 402).length, 150)
      for (const replica of [0, 1]) assert.strictEqual(replies.filter((r) => r.replica === replica).length, 100)
      const record = (await call(0, `/keys/${created.json.data.hash}`, undefined, managementKey)).json.data
      assert.strictEqual(record.usage, 0.05)
      assert.strictEqual(record.limit_remaining, 0)
      const credits = await call(1, "/credits", undefined, managementKey)
      assert.strictEqual(credits.json.data.total_usage, 0.05)
    } finally {
      await Promise.all(replicas.map((r) => r.stop()))
      await fake.close()
      await dropDatabase(databaseUrl)
    }
  }, 180_000)
})

