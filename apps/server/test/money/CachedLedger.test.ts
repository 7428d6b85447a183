import { afterAll, assert, beforeAll, describe, it, layer } from "@effect/vitest"
import { creditsFromNanos, nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import { Accounting } from "@switchyard/core/store/Accounting"
import { Effect, Layer, Result } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as AccountingLive from "../../src/store/money/AccountingLive.ts"
import { costOf, endpoint, type Gateway, provider, type Reply, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { edge, ledgerSums, nanos, seedKey, sqlLayer } from "../support/MoneyStore.ts"
import { storeKind } from "../support/TestServer.ts"

interface LedgerRow {
  readonly key_id: string
  readonly prompt_tokens: number
  readonly total_tokens: number
  readonly cached_items: number
  readonly cached_tokens: number
  readonly cost_nanos: string
}

const ledgerRow = (generationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<LedgerRow>`SELECT key_id, prompt_tokens, total_tokens, cached_items, cached_tokens,
        CAST(cost_nanos AS text) AS cost_nanos FROM ledger WHERE generation_id = ${generationId}`
    return rows[0]
  })

const holdsOf = (keyId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM holds WHERE key_id = ${keyId}`
    return rows[0]!.n
  })

const gen = () => `gen-${Crypto.randomUUID()}`

const recordOf = (key: { keyId: string; workspaceId: string }, generationId = gen()) => ({
  keyId: key.keyId,
  workspaceId: key.workspaceId,
  generationId,
  model: "test/embed",
  provider: "test",
  promptTokens: 0,
  totalTokens: 0,
  isByok: false,
  latencyMs: 3,
  cachedItems: 4,
  cachedTokens: 40
})

const Live = AccountingLive.layer.pipe(Layer.provideMerge(sqlLayer()))

layer(Live, { timeout: 120_000, excludeTestServices: true })(`cached tokens in the ledger (${storeKind})`, (it) => {
  it.effect("settle writes the upstream's tokens and the cached ones apart, and charges only the upstream's cost", () =>
    Effect.gen(function*() {
      const accounting = yield* Accounting
      const key = yield* seedKey()
      const cost = nanos("0.000012")
      const reservation = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: cost, byok: false })
      const generationId = gen()
      const settled = yield* accounting.settle(reservation, {
        generationId,
        model: "test/embed",
        provider: "test",
        promptTokens: 12,
        totalTokens: 12,
        costNanos: cost,
        isByok: false,
        cachedItems: 3,
        cachedTokens: 30
      })
      assert.strictEqual(settled.costNanos, cost)
      const row = (yield* ledgerRow(generationId))!
      assert.deepStrictEqual(
        [row.prompt_tokens, row.total_tokens, row.cached_items, row.cached_tokens, BigInt(row.cost_nanos)],
        [12, 12, 3, 30, cost]
      )
      assert.strictEqual((yield* accounting.credits(key.workspaceId)).totalUsageNanos, cost)
    }))

  it.effect("record writes a cost-0 ledger row with the cached counts, holds nothing and charges nothing; twice is once", () =>
    Effect.gen(function*() {
      const accounting = yield* Accounting
      // A key with no room at all for anything priced: a request that costs nothing still passes.
      const key = yield* seedKey({ limitNanos: 0n })
      yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1n, note: null, grantedByKeyId: null })
      const request = recordOf(key)
      const first = yield* accounting.record(request)
      const again = yield* accounting.record(request)
      assert.deepStrictEqual([first.costNanos, first.duplicate, again.costNanos, again.duplicate], [0n, false, 0n, true])
      const row = (yield* ledgerRow(request.generationId))!
      assert.deepStrictEqual(
        [row.key_id, row.prompt_tokens, row.cached_items, row.cached_tokens, BigInt(row.cost_nanos)],
        [key.keyId, 0, 4, 40, 0n]
      )
      assert.strictEqual((yield* ledgerSums(key.keyId)).rows, 1)
      assert.strictEqual(yield* holdsOf(key.keyId), 0)
      const credits = yield* accounting.credits(key.workspaceId)
      assert.deepStrictEqual([credits.totalUsageNanos, credits.heldNanos], [0n, 0n])
    }))

  it.effect("records and settlements sent together share batches and each writes its own row", () =>
    Effect.gen(function*() {
      const accounting = yield* Accounting
      const key = yield* seedKey()
      const cost = nanos("0.000001")
      const outcomes = yield* Effect.forEach(Array.from({ length: 60 }, (_, i) => i), (i) =>
        i % 2 === 0
          ? accounting.record(recordOf(key)).pipe(Effect.map((s) => s.costNanos))
          : accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: cost, byok: false }).pipe(
            Effect.flatMap((r) => accounting.settle(r, { ...recordOf(key), costNanos: cost, cachedItems: 1, cachedTokens: 2 })),
            Effect.map((s) => s.costNanos)
          ), { concurrency: "unbounded" })
      assert.strictEqual(outcomes.reduce((a, b) => a + b, 0n), 30n * cost)
      const sql = yield* SqlClient.SqlClient
      const sums = yield* sql<{ n: number; items: number; tokens: number }>`SELECT CAST(count(*) AS integer) AS n,
          CAST(SUM(cached_items) AS integer) AS items, CAST(SUM(cached_tokens) AS integer) AS tokens FROM ledger WHERE key_id = ${key.keyId}`
      assert.deepStrictEqual({ ...sums[0]! }, { n: 60, items: 30 * 4 + 30 * 1, tokens: 30 * 40 + 30 * 2 })
      assert.strictEqual((yield* accounting.credits(key.workspaceId)).totalUsageNanos, 30n * cost)
    }))

  it.effect("record makes the key checks a reservation makes: a disabled key is refused, and so is a key spent beyond its limit", () =>
    Effect.gen(function*() {
      const accounting = yield* Accounting
      const sql = yield* SqlClient.SqlClient
      const disabled = yield* seedKey()
      yield* sql`UPDATE api_keys SET disabled = true WHERE id = ${disabled.keyId}`
      const refused = yield* Effect.result(accounting.record(recordOf(disabled)))
      assert.isTrue(Result.isFailure(refused))
      if (Result.isFailure(refused)) {
        assert.strictEqual(edge(refused.failure)._tag, "Unauthorized")
        assert.include(edge(refused.failure).message, "disabled")
      }

      const spent = yield* seedKey({ limitNanos: 100n })
      const reservation = yield* accounting.reserve({ keyId: spent.keyId, workspaceId: spent.workspaceId, amountNanos: 100n, byok: false })
      yield* accounting.settle(reservation, { ...recordOf(spent), costNanos: 100n })
      // The limit lowered below what the key already spent: nothing more, not even a free request.
      yield* sql`UPDATE api_keys SET limit_nanos = 50 WHERE id = ${spent.keyId}`
      const over = yield* Effect.result(accounting.record(recordOf(spent)))
      assert.isTrue(Result.isFailure(over))
      if (Result.isFailure(over)) assert.strictEqual(edge(over.failure).metadata?.reason, "key_limit")
      assert.strictEqual((yield* ledgerSums(disabled.keyId)).rows, 0)
      assert.strictEqual((yield* ledgerSums(spent.keyId)).rows, 1)
    }))
})

const cacheOf = (reply: Reply) => reply.headers.get("x-switchyard-cache")
const generationOf = (reply: Reply) => reply.headers.get("x-generation-id")!

describe(`embeddings cache in the ledger (${storeKind})`, () => {
  let fake: FakeUpstream.FakeServer
  let gateway: Gateway
  beforeAll(async () => {
    fake = await FakeOpenAi.start()
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", fake.url, { zdr: true }, [
            endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1" } }),
            endpoint("acme/dear", { upstream_model: "dear", pricing: { prompt: "1000" } })
          ])
        ],
        workspaces: { default: { cache: true } }
      },
      credits: 100
    })
  })
  afterAll(async () => {
    await gateway.close()
    await fake.close()
  })

  const row = (reply: Reply) => gateway.server.run(ledgerRow(generationOf(reply)))
  const generation = async (reply: Reply) => {
    const found = await gateway.call(`/generation?id=${generationOf(reply)}`)
    assert.strictEqual(found.status, 200, found.text)
    return found.json.data
  }
  const totalUsage = async () =>
    nanosFromCredits((await gateway.call("/credits", undefined, { key: gateway.server.managementKey })).json.data.total_usage)!

  it("a partial hit: the ledger keeps the upstream's tokens and the cached ones apart, usage grows by the upstream's cost only, /generation says cached", async () => {
    const before = await totalUsage()
    const warm = await gateway.embed({ model: "acme/embed", input: ["alpha beta", "gamma delta epsilon"] })
    assert.strictEqual(warm.status, 200, warm.text)
    const mixed = await gateway.embed({ model: "acme/embed", input: ["alpha beta", "gamma delta epsilon", "zeta eta eta theta"] })
    assert.strictEqual(mixed.status, 200, mixed.text)
    assert.strictEqual(cacheOf(mixed), "partial")

    const warmRow = (await row(warm))!
    const mixedRow = (await row(mixed))!
    assert.deepStrictEqual([warmRow.cached_items, warmRow.cached_tokens], [0, 0])
    // Four words went upstream; the five of the cached items were billed when first embedded.
    assert.deepStrictEqual(
      [mixedRow.prompt_tokens, mixedRow.total_tokens, mixedRow.cached_items, mixedRow.cached_tokens],
      [4, 4, 2, warm.json.usage.prompt_tokens]
    )
    assert.strictEqual(mixed.json.usage.prompt_tokens, 4 + warm.json.usage.prompt_tokens)
    assert.strictEqual(mixed.json.usage.cost, costOf(4, "1"))
    assert.strictEqual(creditsFromNanos(BigInt(mixedRow.cost_nanos)), mixed.json.usage.cost)
    const reported = nanosFromCredits(warm.json.usage.cost)! + nanosFromCredits(mixed.json.usage.cost)!
    assert.strictEqual((await totalUsage()) - before, reported)

    const record = await generation(mixed)
    assert.isTrue(record.cached)
    assert.strictEqual(record.native_tokens_cached, warm.json.usage.prompt_tokens)
    assert.strictEqual(record.tokens_prompt, mixed.json.usage.prompt_tokens)
    assert.strictEqual(record.native_tokens_prompt, mixed.json.usage.prompt_tokens)
    assert.strictEqual(record.total_cost, mixed.json.usage.cost)
    const first = await generation(warm)
    assert.isFalse(first.cached)
    assert.strictEqual(first.native_tokens_cached, 0)
  })

  it("a request the cache serves entirely holds nothing: it passes on a key that could not hold its worst case, costs 0 and leaves its ledger row", async () => {
    const input = ["an expensive sentence of seven words"]
    const warm = await gateway.embed({ model: "acme/dear", input })
    assert.strictEqual(warm.status, 200, warm.text)
    assert.isAbove(warm.json.usage.cost, 0.000001)
    const created = await gateway.call("/keys", { name: "tight", limit: 0.000001 }, { key: gateway.server.managementKey })
    assert.strictEqual(created.status, 201, created.text)
    const tight = created.json.key as string
    const hash = created.json.data.hash as string

    // The worst case of anything not cached is above the key's limit.
    const refused = await gateway.embed({ model: "acme/dear", input: ["a sentence nobody sent before"] }, { key: tight })
    assert.strictEqual(refused.status, 402, refused.text)
    const calls = fake.requests.length

    const hit = await gateway.embed({ model: "acme/dear", input }, { key: tight })
    assert.strictEqual(hit.status, 200, hit.text)
    assert.strictEqual(cacheOf(hit), "hit")
    assert.strictEqual(fake.requests.length, calls)
    assert.strictEqual(hit.json.usage.cost, 0)
    assert.strictEqual(hit.json.usage.prompt_tokens, warm.json.usage.prompt_tokens)

    const ledger = (await row(hit))!
    assert.deepStrictEqual(
      [ledger.prompt_tokens, ledger.total_tokens, ledger.cached_items, ledger.cached_tokens, BigInt(ledger.cost_nanos)],
      [0, 0, 1, warm.json.usage.prompt_tokens, 0n]
    )
    assert.strictEqual(await gateway.server.run(holdsOf(ledger.key_id)), 0)
    const record = await generation(hit)
    assert.isTrue(record.cached)
    assert.strictEqual(record.total_cost, 0)
    assert.strictEqual(record.tokens_prompt, warm.json.usage.prompt_tokens)
    const key = (await gateway.call(`/keys/${hash}`, undefined, { key: gateway.server.managementKey })).json.data
    assert.strictEqual(key.usage, 0)
  })

  it("/activity reports per model the tokens the cache answered and what they would have cost at the endpoint's prompt price", async () => {
    const today = new Date().toISOString().slice(0, 10)
    const activity = await gateway.call(`/activity?date=${today}`, undefined, { key: gateway.server.managementKey })
    assert.strictEqual(activity.status, 200, activity.text)
    const sums = await gateway.server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ model: string; cached: number }>`SELECT model, CAST(SUM(cached_tokens) AS integer) AS cached FROM ledger GROUP BY model`
    }))
    const rows = activity.json.data as ReadonlyArray<{ model: string; cached_tokens: number; cache_savings: number }>
    for (const [model, price] of [["acme/embed", "1"], ["acme/dear", "1000"]] as const) {
      const cached = sums.find((s) => s.model === model)!.cached
      assert.isAbove(cached, 0, model)
      const row = rows.find((r) => r.model === model)!
      assert.strictEqual(row.cached_tokens, cached, model)
      assert.strictEqual(row.cache_savings, costOf(cached, price), model)
    }
  })
})
