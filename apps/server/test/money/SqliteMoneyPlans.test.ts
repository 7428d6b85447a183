import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import * as MoneyStore from "../../src/store/MoneyStore.ts"
import { sqlLayer } from "../support/MoneyStore.ts"

/** The tables that grow with the traffic: no money statement may read one of them whole. */
const large = ["ledger", "holds", "key_spend", "workspace_spend", "credit_accounts", "api_keys"]

const workspaces = 200
const keysPerWorkspace = 10
const keys = workspaces * keysPerWorkspace
const days = 60
const ledgerRows = 200_000
const t0 = Date.parse("2030-05-14T10:00:00Z")

/**
 * A SQLite store as a busy gateway leaves it: 2,000 keys in 200 workspaces with limits, the
 * per-day (60 days) and all-time counters of each, a live and an expired hold per key, prepaid
 * credits and a daily budget per workspace, and 200,000 ledger rows; then ANALYZE.
 */
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const series = (n: number) => `WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < ${n - 1})`
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql.unsafe(`${series(workspaces)} INSERT INTO workspaces (id, slug, name) SELECT 'ws-' || n, 'ws-' || n, 'W' FROM g`)
    yield* sql.unsafe(`${series(workspaces)} INSERT INTO users (id, name, default_workspace_id) SELECT 'user-' || n, 'U', 'ws-' || n FROM g`)
    yield* sql.unsafe(`${series(keys)} INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id, limit_nanos, limit_reset)
      SELECT 'key-' || n, 'hash-' || n, 'standard', 'k', 'sk-sy-v1-...', 'user-' || (n / ${keysPerWorkspace}),
        'ws-' || (n / ${keysPerWorkspace}), 1000000000000000, CASE WHEN n % 2 = 0 THEN 'daily' END FROM g`)
    yield* sql.unsafe(`${series(workspaces)} INSERT INTO credit_accounts (workspace_id, credits_nanos, usage_nanos, prepaid)
      SELECT 'ws-' || n, 1000000000000000000, 0, 1 FROM g`)
    yield* sql.unsafe(`${series(workspaces)} INSERT INTO workspace_budgets (id, workspace_id, interval, limit_nanos, created_at, updated_at)
      SELECT 'budget-' || n, 'ws-' || n, 'daily', 1000000000000000, ${t0}, ${t0} FROM g`)
    const day = (d: string) => `CASE WHEN ${d} = 0 THEN '-infinity' ELSE date(${t0 / 1000} - (${d} - 1) * 86400, 'unixepoch') END`
    yield* sql.unsafe(`WITH RECURSIVE k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < ${keys - 1}),
        d(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM d WHERE n < ${days})
      INSERT INTO key_spend (key_id, day, spent_nanos, byok_nanos) SELECT 'key-' || k.n, ${day("d.n")}, 1000, 0 FROM k, d`)
    yield* sql.unsafe(`WITH RECURSIVE w(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM w WHERE n < ${workspaces - 1}),
        d(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM d WHERE n < ${days})
      INSERT INTO workspace_spend (workspace_id, day, spent_nanos, byok_nanos) SELECT 'ws-' || w.n, ${day("d.n")}, 1000, 0 FROM w, d`)
    yield* sql.unsafe(`${series(2 * keys)} INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner, fence)
      SELECT 'hold-' || n, 'key-' || (n % ${keys}), 'ws-' || ((n % ${keys}) / ${keysPerWorkspace}), 1000, 0, ${t0},
        CASE WHEN n < ${keys} THEN ${t0 + 600_000} ELSE ${t0 - 3_600_000} END, 'gone', n FROM g`)
    yield* sql.unsafe(`${series(ledgerRows)} INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens,
        total_tokens, cost_nanos, is_byok, created_at, latency_ms)
      SELECT 'gen-' || n, 'key-' || (n % ${keys}), 'ws-' || ((n % ${keys}) / ${keysPerWorkspace}), 'test/embed', 'test', 10, 10, 1000, 0,
        ${t0} - (n % (${days} * 86400)) * 1000, 5 FROM g`)
  }))
  yield* sql`ANALYZE`
})

/** The statements sent through a context with this transformer, with their parameters. */
const sent: Array<readonly [string, ReadonlyArray<unknown>]> = []
const recording: Statement.Transformer = (self) => {
  sent.push(self.compile())
  return Effect.succeed(self)
}

/** The large tables a statement's plan reads whole (`SCAN t`, with or without a covering index). */
const fullScans = (plan: ReadonlyArray<{ readonly detail: string }>) =>
  plan.flatMap((step) => {
    const scanned = /^SCAN (\w+)/u.exec(step.detail)?.[1]
    return scanned !== undefined && large.includes(scanned) ? [`${scanned}: ${step.detail}`] : []
  })

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
        for (const scan of fullScans(plan)) scans.push(`${text.replace(/\s+/gu, " ").slice(0, 100)}: ${scan}`)
      }
      assert.deepStrictEqual(scans, [])
    }))
})
