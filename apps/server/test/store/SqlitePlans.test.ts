import { assert, layer } from "@effect/vitest"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Context, Effect, Layer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import { EmbeddingCache } from "../../src/cache/EmbeddingCache.ts"
import * as VectorEncoding from "../../src/providers/VectorEncoding.ts"
import * as ApiKeyRepo from "../../src/store/ApiKeyRepo.ts"
import { LedgerReports } from "../../src/store/LedgerReports.ts"
import { LedgerRetention } from "../../src/store/LedgerRetention.ts"
import * as StoreUpkeep from "../../src/store/StoreUpkeep.ts"
import { sqlLayer } from "../support/MoneyStore.ts"

/** The tables that grow with the traffic: no statement of a request or of the upkeep may read one whole. */
const large = ["ledger", "ledger_daily", "holds", "key_spend", "workspace_spend", "effect_persistence_embedding_cache"]

const workspaces = 200
const keysPerWorkspace = 10
const keys = workspaces * keysPerWorkspace
const days = 60
const ledgerRows = 200_000
const t0 = Date.parse("2030-05-14T10:00:00Z")

/** A SQLite store as a busy gateway leaves it: keys, 60 days of counters, 200,000 ledger rows, 20,000 cache entries. */
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const series = (n: number) => `WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < ${n - 1})`
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql.unsafe(`${series(workspaces)} INSERT INTO workspaces (id, slug, name) SELECT 'ws-' || n, 'ws-' || n, 'W' FROM g`)
    yield* sql.unsafe(`${series(workspaces)} INSERT INTO users (id, name, default_workspace_id) SELECT 'user-' || n, 'U', 'ws-' || n FROM g`)
    yield* sql.unsafe(`${series(workspaces)} INSERT INTO memberships (user_id, workspace_id, role) SELECT 'user-' || n, 'ws-' || n, 'admin' FROM g`)
    yield* sql.unsafe(`${series(keys)} INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id, limit_nanos, limit_reset)
      SELECT 'key-' || n, 'hash-' || n, 'standard', 'k', 'sk-sy-v1-...', 'user-' || (n / ${keysPerWorkspace}),
        'ws-' || (n / ${keysPerWorkspace}), 1000000000000000, CASE WHEN n % 2 = 0 THEN 'daily' END FROM g`)
    const day = (d: string) => `CASE WHEN ${d} = 0 THEN '-infinity' ELSE date(${t0 / 1000} - (${d} - 1) * 86400, 'unixepoch') END`
    yield* sql.unsafe(`WITH RECURSIVE k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < ${keys - 1}),
        d(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM d WHERE n < ${days})
      INSERT INTO key_spend (key_id, day, spent_nanos, byok_nanos) SELECT 'key-' || k.n, ${day("d.n")}, 1000, 0 FROM k, d`)
    yield* sql.unsafe(`${series(ledgerRows)} INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens,
        total_tokens, cost_nanos, is_byok, created_at, latency_ms)
      SELECT 'gen-' || n, 'key-' || (n % ${keys}), 'ws-' || ((n % ${keys}) / ${keysPerWorkspace}), 'test/embed', 'test', 10, 10, 1000, 0,
        ${t0} - (n % (${days} * 86400)) * 1000, 5 FROM g`)
    yield* sql.unsafe(`${series(ledgerRows / 10)} INSERT INTO effect_persistence_embedding_cache (id, value, expires)
      SELECT 'entry-' || n, '{"vector":{"text":"[0]","width":1,"encoding":"float"},"tokens":1}', ${t0 + 86_400_000} + n FROM g`)
  }))
})

/** The statements sent through a context with this transformer, with their parameters. */
const sent: Array<readonly [string, ReadonlyArray<unknown>]> = []
const recording: Statement.Transformer = (self) => {
  sent.push(self.compile())
  return Effect.succeed(self)
}

/** The large tables a statement's plan reads whole (`SCAN t` or `SCAN alias`, covering index or not). */
const fullScans = (text: string, plan: ReadonlyArray<{ readonly detail: string }>) => {
  const aliases = new Map<string, string>(large.map((t) => [t, t]))
  for (const m of text.matchAll(/\b(\w+)\s+(?:AS\s+)?(\w+)\b/giu)) {
    if (large.includes(m[1]!)) aliases.set(m[2]!, m[1]!)
  }
  return plan.flatMap((step) => {
    const scanned = /^SCAN (\w+)/u.exec(step.detail)?.[1]
    return scanned !== undefined && aliases.has(scanned) ? [`${aliases.get(scanned)}: ${step.detail}`] : []
  })
}

const explainSent = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const out: Array<string> = []
  for (const [text, params] of sent) {
    if (!/^\s*(select|with|insert|update|delete)\b/iu.test(text)) continue
    const plan = yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)
    for (const scan of fullScans(text, plan)) out.push(`${text.replace(/\s+/gu, " ").slice(0, 160)} → ${scan}`)
  }
  return out
})

const Services = Layer.mergeAll(
  ApiKeyRepo.layer,
  LedgerReports.layer,
  EmbeddingCache.layerSql,
  LedgerRetention.layerWith({ days: 30, interval: "1000 days" })
).pipe(Layer.provide(Layer.succeedContext(Context.make(Statement.CurrentTransformer, recording))))

const Seeded = Layer.effectDiscard(seed).pipe(Layer.provideMerge(sqlLayer("sqlite")))

layer(Seeded, { timeout: 300_000, excludeTestServices: true })("the SQLite store's plans (keys, reports, retention, cache)", (it) => {
  it.effect(`on ${ledgerRows} ledger rows, before and after the upkeep's statistics, no statement reads a large table whole`, () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const requestPath = Effect.gen(function*() {
        const keyStore = yield* ApiKeyStore
        const reports = yield* LedgerReports
        const cache = yield* EmbeddingCache
        const retention = yield* LedgerRetention
        sent.length = 0
        yield* Effect.provideService(Effect.gen(function*() {
          const now = new Date(t0)
          yield* keyStore.findByHash("hash-3")
          yield* keyStore.current("key-3", now)
          yield* keyStore.list({ userId: "user-0", workspaceId: "ws-0", includeDisabled: false, limit: 50, offset: 0, now })
          yield* reports.generation("gen-3", ["ws-0"])
          yield* reports.activity({ workspaceId: "ws-0", fromDay: "2030-05-01", toDay: "2030-05-14" })
          yield* cache.getMany([["entry-1", "entry-2", "absent"]])
          yield* cache.setMany([["entry-new", { vector: VectorEncoding.fromStored({ text: "[0]", width: 1, encoding: "float" }), tokens: 1 }]])
          yield* retention.prune
        }), Statement.CurrentTransformer, recording)
        assert.isAbove(sent.length, 8)
        return yield* explainSent
      }).pipe(Effect.provide(Services))
      assert.deepStrictEqual(yield* requestPath, [])
      yield* StoreUpkeep.optimize(sql)
      assert.deepStrictEqual(yield* requestPath, [])
    }), 300_000)

  it.effect("the check sees a full scan where a statement has no index to use", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const text = "SELECT l.generation_id FROM ledger l WHERE l.model = ?"
      const plan = yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`, ["test/embed"])
      assert.deepStrictEqual(fullScans(text, plan).map((s) => s.split(":")[0]), ["ledger"])
    }))
})
