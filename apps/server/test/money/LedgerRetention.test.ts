import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Accounting } from "@switchyard/core/store/Accounting"
import { ConfigProvider, Effect, Layer } from "effect"
import { HttpBody, HttpClient, HttpClientRequest, HttpRouter } from "effect/http"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as GenerationId from "../../src/pipeline/GenerationId.ts"
import { Routes } from "../../src/Server.ts"
import * as AccountingLive from "../../src/store/money/AccountingLive.ts"
import { cutOf, LedgerRetention } from "../../src/store/money/LedgerRetention.ts"
import { seedKey, sqlLayer } from "../support/MoneyStore.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

// Tuesday 10 March 2026, noon UTC: the days of the test (to Friday the 13th) share one week and one month.
const tuesday = Date.parse("2026-03-10T12:00:00Z")
const day = 86_400_000

/** What the ledger's rows before `cut` sum to, as the rollups group them. */
const sumsBefore = (cut: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const day = sql.onDialectOrElse({
      pg: () => sql`to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD')`,
      orElse: () => sql`strftime('%Y-%m-%d', created_at / 1000, 'unixepoch')`
    })
    return yield* sql<Record<string, string>>`SELECT workspace_id, ${day} AS day,
        key_id, model, provider, CASE WHEN is_byok THEN 'true' ELSE 'false' END AS is_byok, CAST(count(*) AS text) AS requests,
        CAST(SUM(prompt_tokens) AS text) AS prompt_tokens,
        CAST(SUM(total_tokens) AS text) AS total_tokens, CAST(SUM(cached_items) AS text) AS cached_items,
        CAST(SUM(cached_tokens) AS text) AS cached_tokens, CAST(SUM(cost_nanos) AS text) AS cost_nanos
      FROM ledger WHERE created_at < ${cut} GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6`
  }).pipe(Effect.orDie)

const rollups = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<Record<string, string>>`SELECT workspace_id, CAST(day AS text) AS day, key_id, model, provider,
      CASE WHEN is_byok THEN 'true' ELSE 'false' END AS is_byok, CAST(requests AS text) AS requests,
      CAST(prompt_tokens AS text) AS prompt_tokens, CAST(total_tokens AS text) AS total_tokens,
      CAST(cached_items AS text) AS cached_items, CAST(cached_tokens AS text) AS cached_tokens,
      CAST(cost_nanos AS text) AS cost_nanos
    FROM ledger_daily ORDER BY 1, 2, 3, 4, 5, 6`
}).pipe(Effect.orDie)

const ledgerRows = (where: "before" | "from", cut: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = where === "before"
      ? yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM ledger WHERE created_at < ${cut}`
      : yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM ledger WHERE created_at >= ${cut}`
    return rows[0]!.n
  }).pipe(Effect.orDie)

// A priced model on the in-process embedder: every request is a ledger row with a cost.
const config = {
  providers: [{
    slug: "acme",
    name: "Acme",
    adapter: "local",
    api_key_env: null,
    data_collection: "deny",
    endpoints: ["acme/embed", "acme/embed-large"].map((model) => ({
      model,
      upstream_model: "local-embed-v1",
      pricing: { prompt: model === "acme/embed" ? "1000" : "3000" },
      dimensions: 256,
      max_batch_items: 64
    }))
  }],
  workspaces: { default: { cache: true } }
}

/** The gateway, on this test's clock, with a store of its own; an HTTP client that speaks to it. */
const gatewayOnTestClock = (env: Record<string, string>) =>
  Layer.unwrap(Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => tempDir("retention")),
      (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
    )
    const configPath = NodePath.join(dir, "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify(config))
    const store = storeKind === "postgres"
      ? { DATABASE_URL: yield* Effect.acquireRelease(Effect.promise(() => freshDatabase()), (url) => Effect.promise(() => dropDatabase(url))), SWITCHYARD_SECRET_KEY: "b".repeat(64) }
      : { SWITCHYARD_DATA_DIR: NodePath.join(dir, "data") }
    return HttpRouter.serve(Routes, { disableLogger: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layerTest),
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({
        SWITCHYARD_CONFIG: configPath,
        SWITCHYARD_RATE_LIMIT: "off",
        SWITCHYARD_LOG_LEVEL: "error",
        ...store,
        ...env
      })))
    )
  }))

const call = (key: string, method: "GET" | "POST", path: string, body?: unknown) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(HttpClientRequest.make(method)(`/api/v1${path}`, {
      headers: { authorization: `Bearer ${key}` },
      ...(body === undefined ? {} : { body: HttpBody.jsonUnsafe(body) })
    }))
    return { status: response.status, body: (yield* response.json) as any }
  }).pipe(Effect.orDie)

describe(`ledger retention (${storeKind})`, () => {
  it.effect("rows past retention are pruned by the upkeep into rollups equal to their sums; /activity and key usage do not change; /generation of a pruned id is 404 past retention", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(tuesday)
      const managementKey = KeySecret.generate()
      const apiKey = KeySecret.generate()
      const gateway = gatewayOnTestClock({
        SWITCHYARD_LEDGER_RETENTION_DAYS: "2",
        SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
        SWITCHYARD_BOOTSTRAP_API_KEY: apiKey
      })
      yield* Effect.gen(function*() {
        const retention = yield* LedgerRetention
        const embed = (model: string, input: ReadonlyArray<string>) =>
          Effect.map(call(apiKey, "POST", "/embeddings", { model, input }), (r) => {
            assert.strictEqual(r.status, 200, JSON.stringify(r.body))
            return r.body.id as string
          })
        // Tuesday: three requests on two models, the last one partly served by the cache.
        const tuesdayIds = [
          yield* embed("acme/embed", ["the first request", "of tuesday"]),
          yield* embed("acme/embed-large", ["a larger model"]),
          yield* embed("acme/embed", ["the first request", "and one more input"])
        ]
        yield* TestClock.adjust(day)
        const wednesdayId = yield* embed("acme/embed", ["wednesday's request"])
        // Thursday: retention two days keeps Tuesday still.
        yield* TestClock.adjust(day)
        yield* retention.prune
        assert.strictEqual(yield* ledgerRows("from", new Date(0)), 4)

        const dates = ["2026-03-10", "2026-03-11"]
        const reports = Effect.gen(function*() {
          const activity = yield* call(managementKey, "GET", "/activity")
          const byDate = yield* Effect.forEach(dates, (date) => call(managementKey, "GET", `/activity?date=${date}`))
          const keys = yield* call(managementKey, "GET", "/keys")
          for (const r of [activity, ...byDate, keys]) assert.strictEqual(r.status, 200, JSON.stringify(r.body))
          return { activity: activity.body.data, byDate: byDate.map((r) => r.body.data), keys: keys.body.data }
        })
        const before = yield* reports
        assert.strictEqual(before.activity.reduce((n: number, r: any) => n + r.requests, 0), 4)
        assert.isAbove(before.keys.find((k: any) => k.usage > 0).usage, 0)
        assert.strictEqual((yield* call(apiKey, "GET", `/generation?id=${tuesdayIds[0]}`)).status, 200)

        // Friday: Tuesday is past retention. The upkeep runs on the clock; `prune` waits for it.
        const now = tuesday + 3 * day
        const cut = cutOf(now, 2)
        assert.strictEqual(cut.toISOString(), "2026-03-11T00:00:00.000Z")
        const expected = yield* sumsBefore(cut)
        assert.strictEqual(expected.reduce((n, r) => n + Number(r.requests), 0), 3)
        assert.isTrue(expected.some((r) => Number(r.cached_items) > 0))
        yield* TestClock.adjust(day)
        yield* retention.prune

        assert.strictEqual(yield* ledgerRows("before", cut), 0)
        assert.strictEqual(yield* ledgerRows("from", cut), 1)
        assert.deepStrictEqual(yield* rollups, expected)
        assert.deepStrictEqual(yield* reports, before)

        const pruned = yield* call(apiKey, "GET", `/generation?id=${tuesdayIds[1]}`)
        assert.strictEqual(pruned.status, 404)
        assert.strictEqual(pruned.body.error.code, 404)
        assert.include(pruned.body.error.message, "past the ledger's retention period (2 days)")
        assert.strictEqual((yield* call(apiKey, "GET", `/generation?id=${wednesdayId}`)).body.data.id, wednesdayId)
        // An id made after the cut that has no row is unknown, not pruned.
        const unknown = yield* call(apiKey, "GET", `/generation?id=${yield* GenerationId.make("emb")}`)
        assert.strictEqual(unknown.status, 404)
        assert.match(unknown.body.error.message, /^No generation gen-emb-/u)

        // Nothing left to prune: a run changes nothing.
        assert.strictEqual(yield* retention.prune, 0)
        assert.deepStrictEqual(yield* rollups, expected)
      }).pipe(Effect.provide(gateway))
    }), 180_000)

  it.effect("pruning goes a batch at a time, folds every row once (BYOK apart), and leaves the spend counters as they were", () =>
    // The clock is set first: the layers' loops then sleep from that time on.
    Effect.andThen(TestClock.setTime(tuesday), Effect.gen(function*() {
      const accounting = yield* Accounting
      const sql = yield* SqlClient.SqlClient
      const first = yield* seedKey()
      const second = yield* seedKey({ workspaceId: first.workspaceId, userId: first.userId })
      const other = yield* seedKey()
      let n = 0
      const charge = (key: typeof first, costNanos: bigint, isByok = false) =>
        Effect.gen(function*() {
          const reservation = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: costNanos, byok: isByok })
          yield* accounting.settle(reservation, {
            generationId: yield* GenerationId.make("emb"),
            model: n % 2 === 0 ? "acme/a" : "acme/b",
            provider: "acme",
            promptTokens: 10 + n,
            totalTokens: 10 + n,
            costNanos,
            isByok,
            cachedItems: n % 3,
            cachedTokens: 5 * (n % 3)
          })
          n++
        })
      for (const key of [first, second, other, first, first]) yield* charge(key, BigInt(1_000 + n))
      yield* charge(first, 7_777n, true)
      yield* TestClock.adjust("3 hours")
      yield* charge(second, 123n)
      const counters = sql<Record<string, string>>`SELECT key_id, CAST(day AS text) AS day, CAST(spent_nanos AS text) AS spent,
          CAST(byok_nanos AS text) AS byok
        FROM key_spend ORDER BY 1, 2`
      const spent = yield* counters
      yield* TestClock.adjust(2 * day)
      const cut = cutOf(tuesday + 2 * day + 3 * 3_600_000, 1)
      const expected = yield* sumsBefore(cut)
      assert.strictEqual(expected.reduce((n, r) => n + Number(r.requests), 0), 7)
      assert.isTrue(expected.some((r) => r.is_byok === "true"))

      const retention = yield* LedgerRetention
      assert.strictEqual(yield* retention.prune, 7)
      assert.strictEqual(yield* ledgerRows("before", cut), 0)
      assert.deepStrictEqual(yield* rollups, expected)
      assert.deepStrictEqual(yield* counters, spent)
      assert.strictEqual((yield* retention.prunedBefore).pipe((o) => o._tag === "Some" ? o.value.toISOString() : ""), cut.toISOString())
    }).pipe(
      Effect.provide(
        Layer.mergeAll(AccountingLive.layer, LedgerRetention.layerWith({ days: 1, batchRows: 2, pauseMs: 1, interval: "1000 days" })).pipe(
          Layer.provideMerge(sqlLayer())
        )
      )
    )), 180_000)
})
