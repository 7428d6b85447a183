import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import * as MoneyStore from "../../src/store/money/MoneyStore.ts"
import { day, fullScans, keys, keysPerWorkspace, ledgerRows, recorder, seedCore, series, t0, workspaces, days } from "../support/BusySqliteStore.ts"
import { sqlLayer } from "../support/MoneyStore.ts"

/** The tables that grow with the traffic: no money statement may read one of them whole. */
const large = ["ledger", "holds", "key_spend", "workspace_spend", "credit_accounts", "api_keys"]

/**
 * The money tables on top of the busy store every plan test seeds: prepaid credits and a daily
 * budget per workspace, the per-day (60 days) and all-time counters of each workspace, a live and an
 * expired hold per key; then ANALYZE.
 */
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* seedCore
    yield* sql.unsafe(`${series(workspaces)} INSERT INTO credit_accounts (workspace_id, credits_nanos, usage_nanos, prepaid)
      SELECT 'ws-' || n, 1000000000000000000, 0, 1 FROM g`)
    yield* sql.unsafe(`${series(workspaces)} INSERT INTO workspace_budgets (id, workspace_id, interval, limit_nanos, created_at, updated_at)
      SELECT 'budget-' || n, 'ws-' || n, 'daily', 1000000000000000, ${t0}, ${t0} FROM g`)
    yield* sql.unsafe(`WITH RECURSIVE w(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM w WHERE n < ${workspaces - 1}),
        d(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM d WHERE n < ${days})
      INSERT INTO workspace_spend (workspace_id, day, spent_nanos, byok_nanos) SELECT 'ws-' || w.n, ${day("d.n")}, 1000, 0 FROM w, d`)
    yield* sql.unsafe(`${series(2 * keys)} INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner, fence)
      SELECT 'hold-' || n, 'key-' || (n % ${keys}), 'ws-' || ((n % ${keys}) / ${keysPerWorkspace}), 1000, 0, ${t0},
        CASE WHEN n < ${keys} THEN ${t0 + 600_000} ELSE ${t0 - 3_600_000} END, 'gone', n FROM g`)
  }))
  yield* sql`ANALYZE`
})

const { sent, transformer: recording } = recorder()
const scansOf = fullScans(large)

const Seeded = Layer.effectDiscard(seed).pipe(Layer.provideMerge(sqlLayer("sqlite")))

layer(Seeded, { timeout: 120_000, excludeTestServices: true })("the SQLite money store's plans", (it) => {
  it.effect(`on ${ledgerRows} ledger rows, every statement of a grant, flush, read-back, hand-back and credits read finds its rows by index`, () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* MoneyStore.make
      sent.length = 0
      yield* Effect.provideService(Effect.gen(function*() {
        const ask = { need: 1000n, desired: 5000n, unit: 1000n, edge: 0n, divisor: 4n }
        const granted = yield* store.grant({
          id: "lease-plan", owner: "owner-plan", keyId: "key-4", workspaceId: "ws-0", byok: false, ask, nowMs: t0, expiresAtMs: t0 + 600_000
        })
        assert.strictEqual(granted.outcome, "ok")
        const row = {
          generation: "gen-plan-1", key: "key-4", workspace: "ws-0", model: "test/embed", provider: "test", prompt_tokens: 1,
          total_tokens: 1, cost: "900", byok: false, created: new Date(t0).toISOString(), latency_ms: 5, cached_items: 0,
          cached_tokens: 0, attempts: null, lease: "lease-plan", fence: granted.fence
        }
        yield* store.flush([row, { ...row, generation: "gen-1", lease: null, fence: null }], t0 + 600_000)
        yield* store.written([row])
        yield* store.readLease("lease-plan")
        yield* store.credits("ws-0", t0)
        yield* store.handBack("lease-plan", 100n)
        yield* store.end("lease-plan", granted.fence!)
      }), Statement.CurrentTransformer, recording)
      const texts = sent.map(([text]) => text)
      assert.isTrue(texts.some((t) => t.startsWith("INSERT INTO ledger")), "the ledger was written")
      assert.isTrue(texts.some((t) => t.includes("FROM key_spend")), "the key's counters were read")
      const scans: Array<string> = []
      for (const [text, params] of sent) {
        const plan = yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)
        for (const scan of scansOf(text, plan)) scans.push(`${text.replace(/\s+/gu, " ").slice(0, 100)}: ${scan}`)
      }
      assert.deepStrictEqual(scans, [])
    }))
})
