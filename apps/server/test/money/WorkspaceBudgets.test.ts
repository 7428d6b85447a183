import { afterAll, assert, beforeAll, describe, it, layer } from "@effect/vitest"
import { Accounting } from "@switchyard/core/store/Accounting"
import type { Reservation } from "@switchyard/core/store/Accounting"
import { Array as Arr, Effect, Layer, Result } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as AccountingLive from "../../src/store/money/AccountingLive.ts"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { StoreChanges } from "../../src/store/sql/StoreChanges.ts"
import { atTime, edge, nanos, refusal, seedKey, sqlLayer } from "../support/MoneyStore.ts"
import { type ServerProcess, startServerProcess } from "../support/ServerProcess.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

const Live = AccountingLive.layer.pipe(Layer.provideMerge(sqlLayer()))

const setBudget = (workspaceId: string, interval: string, limitNanos: bigint, includeByok = false) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE workspaces SET include_byok_in_budgets = ${includeByok} WHERE id = ${workspaceId}`
    yield* sql`INSERT INTO workspace_budgets (id, workspace_id, interval, limit_nanos, created_at, updated_at)
      VALUES (${Crypto.randomUUID()}, ${workspaceId}, ${interval}, CAST(${limitNanos.toString()} AS bigint), ${new Date()}, ${new Date()})
      ON CONFLICT (workspace_id, interval) DO UPDATE SET limit_nanos = EXCLUDED.limit_nanos`
    // What the workspace API does after a change: the keys' facts kept in memory are read again.
    yield* (yield* StoreChanges).changed({ _tag: "Workspace", workspaceId })
  }).pipe(Effect.orDie)

const settle = (reservation: Reservation, costNanos: bigint, options: { isByok?: boolean } = {}) =>
  Effect.flatMap(Accounting, (accounting) =>
    accounting.settle(reservation, {
      generationId: `gen-${Crypto.randomUUID()}`,
      model: "test/embed",
      provider: "test",
      promptTokens: 10,
      totalTokens: 10,
      costNanos,
      isByok: options.isByok ?? false
    }))

const spendOf = (workspaceId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ ledger: string; counted: string }>`SELECT
        CAST((SELECT COALESCE(SUM(cost_nanos), 0) FROM ledger WHERE workspace_id = ${workspaceId}) AS text) AS ledger,
        CAST((SELECT COALESCE(SUM(spent_nanos + byok_nanos), 0) FROM workspace_spend
          WHERE workspace_id = ${workspaceId} AND day = '-infinity') AS text) AS counted`
    return { ledger: BigInt(rows[0]!.ledger), counted: BigInt(rows[0]!.counted) }
  }).pipe(Effect.orDie)

layer(Live, { timeout: 120_000, excludeTestServices: true })(`workspace budgets in the store (${storeKind})`, (it) => {
  it.effect("200 concurrent requests on a workspace whose budget affords 50: exactly 50 succeed, the rest 402 naming the budget", () =>
    Effect.gen(function*() {
      const accounting = yield* Accounting
      const cost = nanos("0.000123457")
      const key = yield* seedKey()
      // A second key of the same workspace: the budget is the workspace's, not a key's.
      const other = yield* seedKey({ workspaceId: key.workspaceId, userId: key.userId })
      yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 10_000n * cost, note: null, grantedByKeyId: null })
      yield* setBudget(key.workspaceId, "monthly", 50n * cost)
      const results = yield* Effect.forEach(
        Arr.range(1, 200),
        (i) => {
          const k = i % 2 === 0 ? key : other
          return accounting.reserve({ keyId: k.keyId, workspaceId: k.workspaceId, amountNanos: cost, byok: false }).pipe(
            Effect.flatMap((r) => settle(r, cost)),
            Effect.result
          )
        },
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter(Result.isSuccess).length, 50)
      const refused = results.filter(Result.isFailure).map((r) => edge(r.failure))
      assert.strictEqual(refused.length, 150)
      for (const error of refused) {
        assert.strictEqual(error._tag, "PaymentRequired")
        assert.include(error.message, "workspace budget")
        assert.include(error.message, "monthly")
        assert.strictEqual(error.metadata?.reason, "workspace_budget")
        assert.strictEqual(error.metadata?.budget, "monthly")
      }
      const spend = yield* spendOf(key.workspaceId)
      assert.strictEqual(spend.ledger, 50n * cost)
      assert.strictEqual(spend.counted, spend.ledger)
    }))

  it.effect("daily, weekly (Monday to Sunday) and monthly budgets start again at midnight UTC; lifetime never does", () =>
    Effect.gen(function*() {
      const accounting = yield* Accounting
      const cost = 1_000n
      const key = yield* seedKey()
      yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1_000_000n, note: null, grantedByKeyId: null })
      const spend = (at: string) =>
        accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: cost, byok: false }).pipe(
          Effect.flatMap((r) => settle(r, cost)),
          Effect.as("ok" as const),
          Effect.catchTag("Refused", (e) => Effect.succeed(edge(e).metadata?.budget as string)),
          atTime(Date.parse(at))
        )
      // Sunday 2030-06-02 late, then Monday 2030-06-03.
      yield* setBudget(key.workspaceId, "daily", cost)
      assert.strictEqual(yield* spend("2030-06-02T23:59:59.000Z"), "ok")
      assert.strictEqual(yield* spend("2030-06-02T23:59:59.500Z"), "daily")
      assert.strictEqual(yield* spend("2030-06-03T00:00:00.000Z"), "ok")
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM workspace_budgets WHERE workspace_id = ${key.workspaceId}`.pipe(Effect.orDie)
      yield* setBudget(key.workspaceId, "weekly", 2n * cost)
      // The week of Monday 2030-06-03 has one spend in it so far.
      assert.strictEqual(yield* spend("2030-06-09T12:00:00.000Z"), "ok")
      assert.strictEqual(yield* spend("2030-06-09T23:59:59.000Z"), "weekly")
      assert.strictEqual(yield* spend("2030-06-10T00:00:00.000Z"), "ok")
      yield* sql`DELETE FROM workspace_budgets WHERE workspace_id = ${key.workspaceId}`.pipe(Effect.orDie)
      yield* setBudget(key.workspaceId, "monthly", 3n * cost)
      // June holds four spends by now: over the monthly budget until July.
      assert.strictEqual(yield* spend("2030-06-30T23:59:59.000Z"), "monthly")
      assert.strictEqual(yield* spend("2030-07-01T00:00:00.000Z"), "ok")
      yield* setBudget(key.workspaceId, "lifetime", 5n * cost)
      assert.strictEqual(yield* spend("2030-08-01T00:00:00.000Z"), "lifetime")
      assert.strictEqual(yield* spend("2031-08-01T00:00:00.000Z"), "lifetime")
      const totals = yield* spendOf(key.workspaceId)
      assert.strictEqual(totals.ledger, 5n * cost)
      assert.strictEqual(totals.counted, totals.ledger)
    }))

  it.effect("BYOK spend counts toward budgets only with include_byok_in_budgets; a settlement never goes past a budget", () =>
    Effect.gen(function*() {
      const accounting = yield* Accounting
      const key = yield* seedKey()
      yield* setBudget(key.workspaceId, "lifetime", 1_000n)
      const byok = () => accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 800n, byok: true })
      yield* settle(yield* byok(), 800n, { isByok: true })
      yield* settle(yield* byok(), 800n, { isByok: true })
      yield* setBudget(key.workspaceId, "lifetime", 2_000n, true)
      const refused = yield* refusal(byok())
      assert.strictEqual(refused.metadata?.reason, "workspace_budget")
      // A hold of 300 that ends up costing 900: charged only up to the budget (2000 - 1600).
      const held = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 300n, byok: true })
      const settled = yield* settle(held, 900n, { isByok: true })
      assert.strictEqual(settled.costNanos, 400n)
      assert.isTrue(settled.capped)
    }))
})

const tokens = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

const configFor = (url: string) => ({
  providers: [provider("alpha", url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1" }, input_modalities: ["text", "tokens"] })])]
})

describe(`workspace budgets through the gateway (${storeKind})`, () => {
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

  it("200 concurrent requests on a workspace whose daily budget affords 50: 50 succeed, 150 get 402 naming the budget", async () => {
    const admin = { key: gateway.server.managementKey }
    const workspace = (await gateway.call("/credits", undefined, admin)).status
    assert.strictEqual(workspace, 200)
    const id = (await gateway.call("/key", undefined, admin)).json.data.workspace_id as string
    const set = await gateway.call(`/workspaces/${id}/budgets/daily`, { limit_usd: 0.05 }, { ...admin, method: "PUT" })
    assert.strictEqual(set.status, 200, set.text)
    const replies = await Promise.all(Array.from({ length: 200 }, () => gateway.embed({ model: "acme/embed", input: tokens(1000) })))
    assert.strictEqual(replies.filter((r) => r.status === 200).length, 50)
    const refused = replies.filter((r) => r.status === 402)
    assert.strictEqual(refused.length, 150)
    for (const r of refused) {
      assert.include(r.json.error.message, "workspace budget")
      assert.strictEqual(r.json.error.metadata.reason, "workspace_budget")
      assert.strictEqual(r.json.error.metadata.budget, "daily")
    }
    assert.strictEqual(fake.requests.length, 50)
    const activity = await gateway.call("/activity", undefined, admin)
    const row = activity.json.data.find((r: any) => r.model === "acme/embed")
    assert.strictEqual(row.requests, 50)
    assert.strictEqual(row.usage, 0.05)
  })
})

describe.skipIf(storeKind !== "postgres")("workspace budgets across two server processes on one PostgreSQL", () => {
  it("200 concurrent requests split over two replicas on a workspace whose budget affords 50: 50 succeed", async () => {
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
      const call = (i: number, path: string, body: unknown, key: string, method?: string) =>
        fetch(`${replicas[i % 2]!.baseUrl}${path}`, {
          method: method ?? (body === undefined ? "GET" : "POST"),
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        }).then(async (r) => ({ status: r.status, json: await r.json() as any }))
      assert.strictEqual((await call(0, "/credits", { amount: 10 }, managementKey)).status, 200)
      const workspaceId = (await call(0, "/key", undefined, managementKey)).json.data.workspace_id as string
      assert.strictEqual((await call(1, `/workspaces/${workspaceId}/budgets/weekly`, { limit_usd: 0.05 }, managementKey, "PUT")).status, 200)
      const replies = await Promise.all(Array.from({ length: 200 }, (_, i) =>
        call(i, "/embeddings", { model: "acme/embed", input: tokens(1000) }, apiKey).then((r) => ({ ...r, replica: i % 2 }))
      ))
      const others = replies.filter((r) => r.status !== 200 && r.status !== 402)
      assert.deepStrictEqual(others.map((r) => r.json), [])
      assert.strictEqual(replies.filter((r) => r.status === 200).length, 50)
      const refused = replies.filter((r) => r.status === 402)
      assert.strictEqual(refused.length, 150)
      for (const r of refused) assert.strictEqual(r.json.error.metadata.budget, "weekly")
      for (const replica of [0, 1]) assert.strictEqual(replies.filter((r) => r.replica === replica).length, 100)
      const credits = await call(1, "/credits", undefined, managementKey)
      assert.strictEqual(credits.json.data.total_usage, 0.05)
    } finally {
      await Promise.all(replicas.map((r) => r.stop()))
      await fake.close()
      await dropDatabase(databaseUrl)
    }
  }, 180_000)
})
