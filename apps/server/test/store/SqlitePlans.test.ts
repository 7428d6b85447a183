import { assert, layer } from "@effect/vitest"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Context, Effect, Layer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import { EmbeddingCache } from "../../src/cache/EmbeddingCache.ts"
import * as VectorEncoding from "../../src/providers/VectorEncoding.ts"
import * as ApiKeyStoreLive from "../../src/store/keys/ApiKeyStoreLive.ts"
import { LedgerReports } from "../../src/store/money/LedgerReports.ts"
import { LedgerRetention } from "../../src/store/money/LedgerRetention.ts"
import * as StoreUpkeep from "../../src/store/sqlite/StoreUpkeep.ts"
import { fullScans, ledgerRows, recorder, seedCore, series, t0, workspaces } from "../support/BusySqliteStore.ts"
import { sqlLayer } from "../support/MoneyStore.ts"

/** The tables that grow with the traffic: no statement of a request or of the upkeep may read one whole. */
const large = ["ledger", "ledger_daily", "holds", "key_spend", "workspace_spend", "effect_persistence_embedding_cache"]

/** The busy store every plan test seeds, with members and 20,000 cache entries. */
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* seedCore
    yield* sql.unsafe(`${series(workspaces)} INSERT INTO memberships (user_id, workspace_id, role) SELECT 'user-' || n, 'ws-' || n, 'admin' FROM g`)
    yield* sql.unsafe(`${series(ledgerRows / 10)} INSERT INTO effect_persistence_embedding_cache (id, value, expires)
      SELECT 'entry-' || n, '{"vector":{"text":"[0]","width":1,"encoding":"float"},"tokens":1}', ${t0 + 86_400_000} + n FROM g`)
  }))
})

const { sent, transformer: recording } = recorder()
const fullScansOfLarge = fullScans(large)

const explainSent = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const out: Array<string> = []
  for (const [text, params] of sent) {
    if (!/^\s*(select|with|insert|update|delete)\b/iu.test(text)) continue
    const plan = yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)
    for (const scan of fullScansOfLarge(text, plan)) out.push(`${text.replace(/\s+/gu, " ").slice(0, 160)} → ${scan}`)
  }
  return out
})

const Services = Layer.mergeAll(
  ApiKeyStoreLive.layer,
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
      assert.deepStrictEqual(fullScansOfLarge(text, plan).map((s) => s.split(":")[0]), ["ledger"])
    }))
})
