import { assert, layer } from "@effect/vitest"
import { Accounting } from "@switchyard/core/store/Accounting"
import { Context, Effect, Layer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import { EmbeddingCache } from "../../src/cache/EmbeddingCache.ts"
import * as AccountingLive from "../../src/store/money/AccountingLive.ts"
import { LedgerReports } from "../../src/store/money/LedgerReports.ts"
import * as MoneyFunctions from "../../src/store/money/MoneyFunctions.ts"
import * as StoreUpkeep from "../../src/store/sqlite/StoreUpkeep.ts"
import * as VectorEncoding from "../../src/providers/VectorEncoding.ts"
import { sqlLayer } from "./MoneyStore.ts"
import { storeKind } from "./TestServer.ts"

/** The tables that grow with the traffic: no statement of a request may read one of them whole. */
const large = ["ledger", "holds", "key_spend", "workspace_spend", "effect_persistence_embedding_cache"]

const workspaces = 200
const keysPerWorkspace = 10
const keys = workspaces * keysPerWorkspace
const days = 60

/**
 * Rows written in one transaction without the foreign keys' check of each row (the seed's rows
 * refer to rows it made): about half the time of a load.
 */
const bulkLoad = <A, E, R>(load: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.andThen(sql`SET LOCAL session_replication_role = replica`, load))
  })

/**
 * A store as a busy gateway leaves it, in set-based statements, but for its ledger ({@link grow}):
 * 2,000 keys in 200 workspaces, the per-day (60 days) and all-time counters of every key and
 * workspace, one live and one expired hold per key, prepaid credits and a daily budget per
 * workspace, and the embeddings cache's table.
 */
const seed =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* bulkLoad(Effect.gen(function*() {
      yield* sql`INSERT INTO workspaces (id, slug, name) SELECT 'ws-' || g, 'ws-' || g, 'W' FROM generate_series(0, ${workspaces - 1}) g`
      yield* sql`INSERT INTO users (id, name, default_workspace_id) SELECT 'user-' || g, 'U', 'ws-' || g FROM generate_series(0, ${workspaces - 1}) g`
      yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id, limit_nanos, limit_reset)
        SELECT 'key-' || g, 'hash-' || g, 'standard', 'k', 'sk-sy-v1-...', 'user-' || (g / ${keysPerWorkspace}),
            'ws-' || (g / ${keysPerWorkspace}), 1000000000000000, CASE WHEN g % 2 = 0 THEN 'daily' END
          FROM generate_series(0, ${keys - 1}) g`
      yield* sql`INSERT INTO credit_accounts (workspace_id, credits_nanos, usage_nanos, prepaid)
        SELECT 'ws-' || g, 1000000000000000000, 0, true FROM generate_series(0, ${workspaces - 1}) g`
      yield* sql`INSERT INTO workspace_budgets (id, workspace_id, interval, limit_nanos, created_at, updated_at)
        SELECT 'budget-' || g, 'ws-' || g, 'daily', 1000000000000000, now(), now() FROM generate_series(0, ${workspaces - 1}) g`
      yield* sql`INSERT INTO key_spend (key_id, day, spent_nanos, byok_nanos)
        SELECT 'key-' || k, CASE WHEN d = 0 THEN '-infinity'::date ELSE current_date - d + 1 END, 1000, 0
          FROM generate_series(0, ${keys - 1}) k, generate_series(0, ${days}) d`
      yield* sql`INSERT INTO workspace_spend (workspace_id, day, spent_nanos, byok_nanos)
        SELECT 'ws-' || w, CASE WHEN d = 0 THEN '-infinity'::date ELSE current_date - d + 1 END, 1000, 0
          FROM generate_series(0, ${workspaces - 1}) w, generate_series(0, ${days}) d`
      yield* sql`INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner)
        SELECT 'hold-' || g, 'key-' || (g % ${keys}), 'ws-' || ((g % ${keys}) / ${keysPerWorkspace}), 1000, false, now(),
            now() + CASE WHEN g < ${keys} THEN interval '10 minutes' ELSE interval '-1 hour' END, 'gone'
          FROM generate_series(0, ${2 * keys - 1}) g`
    }))
    // The cache's table is made by its store when the cache starts.
    yield* Effect.gen(function*() {
      const cache = yield* EmbeddingCache
      yield* cache.getMany([["warm"]])
    }).pipe(Effect.provide(EmbeddingCache.layerSql))
  })

/** The ledger grown from `from` rows to `to`, and the cache with it (a tenth as many entries). */
const grow = (from: number, to: number) =>
  bulkLoad(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos,
        is_byok, created_at, latency_ms)
      SELECT 'gen-' || g, 'key-' || (g % ${keys}), 'ws-' || ((g % ${keys}) / ${keysPerWorkspace}), 'test/embed', 'test', 10, 10,
          1000, false, now() - make_interval(secs => (g % (${days} * 86400))), 5
        FROM generate_series(${from + 1}::int, ${to}::int) g`
    yield* sql`INSERT INTO effect_persistence_embedding_cache (id, value, expires)
      SELECT 'entry-' || g, '{"vector":{"text":"[0]","width":1,"encoding":"float"},"tokens":1}',
          (extract(epoch FROM now()) * 1000)::bigint + 86400000
        FROM generate_series(${Math.floor(from / 10) + 1}::int, ${Math.floor(to / 10)}::int) g`
  }))

/** Every scan of a large table whole in an EXPLAIN (FORMAT JSON) plan. */
const fullScans = (plan: unknown): ReadonlyArray<string> => {
  const found: Array<string> = []
  const walk = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(walk)
    if (node === null || typeof node !== "object") return
    const n = node as Record<string, unknown>
    if (n["Node Type"] === "Seq Scan" && large.includes(String(n["Relation Name"]))) found.push(String(n["Relation Name"]))
    for (const value of Object.values(n)) walk(value)
  }
  walk(plan)
  return found
}

const planOf = (rows: ReadonlyArray<Record<string, unknown>>): unknown => {
  const cell = rows[0]?.["QUERY PLAN"]
  return typeof cell === "string" ? JSON.parse(cell) : cell
}

/** The type of every parameter and local variable a function's statements read. */
const variables = (f: MoneyFunction) => {
  const types = new Map<string, string>()
  for (const part of f.parameters.split(",")) {
    const m = /^\s*(p_\w+)\s+(\w+)/u.exec(part)
    if (m !== null) types.set(m[1]!, m[2]!)
  }
  for (const m of f.declare.matchAll(/(v_\w+)\s+(\w+(?:\[\])?)/gu)) types.set(m[1]!, m[2]!)
  return types
}
type MoneyFunction = MoneyFunctions.MoneyFunction

/** A value of each variable for a custom plan: an existing key, workspace, hold; ten flush rows. */
const sample = (name: string): string => {
  const rows = Array.from({ length: 10 }, (_, i) => ({
    generation: i < 5 ? `gen-${i + 1}` : `gen-new-${i}`,
    key: `key-${i + 1}`,
    workspace: "ws-0",
    model: "test/embed",
    provider: "test",
    prompt_tokens: 1,
    total_tokens: 1,
    cost: "1000",
    byok: false,
    created: new Date().toISOString(),
    latency_ms: 1,
    cached_items: 0,
    cached_tokens: 0,
    lease: "hold-1"
  }))
  const values: Record<string, string> = {
    p_rows: `'${JSON.stringify(rows)}'`,
    p_key: "'key-1'",
    p_workspace: "'ws-0'",
    p_id: "'hold-1'",
    p_exclude_hold: "'hold-1'",
    p_owner: "'owner'",
    p_now: "now()",
    p_expires: "now() + interval '10 minutes'",
    p_byok: "false",
    p_include_byok: "false",
    v_include_byok: "false",
    v_from: "current_date",
    v_to: "'infinity'",
    v_grant: "1000",
    p_amount: "1000"
  }
  return values[name] ?? "NULL"
}

interface Explained {
  readonly statement: string
  readonly plan: "custom" | "generic"
  readonly fullScans: ReadonlyArray<string>
}

/**
 * The custom and the generic plan (as PL/pgSQL caches one) of a statement inside a money function:
 * its variables become the parameters of a prepared statement.
 */
const explainInside = (f: MoneyFunction, name: string, text: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const types = variables(f)
    const used = [...new Set(text.match(/\b[pv]_\w+\b/gu) ?? [])]
    const numbered = text.replace(/\b[pv]_\w+\b/gu, (v) => `$${used.indexOf(v) + 1}`)
    const signature = used.map((v) => {
      const type = types.get(v)
      if (type === undefined) throw new Error(`${f.name}.${name}: no type for ${v}`)
      return type
    })
    const prepared = `plan_${f.name}_${name}`.toLowerCase()
    const args = used.map(sample).join(", ")
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql.unsafe(`PREPARE ${prepared}${signature.length > 0 ? `(${signature.join(", ")})` : ""} AS ${numbered}`)
      const out: Array<Explained> = []
      for (const mode of ["custom", "generic"] as const) {
        yield* sql.unsafe(`SET LOCAL plan_cache_mode = ${mode === "custom" ? "force_custom_plan" : "force_generic_plan"}`)
        const rows = yield* sql.unsafe<Record<string, unknown>>(
          `EXPLAIN (FORMAT JSON) EXECUTE ${prepared}${args.length > 0 ? `(${args})` : ""}`
        )
        out.push({ statement: `${f.name}.${name}`, plan: mode, fullScans: fullScans(planOf(rows)) })
      }
      yield* sql.unsafe(`DEALLOCATE ${prepared}`)
      return out
    }))
  })

/** The statements sent through a context with this transformer, with their parameters. */
const sent: Array<readonly [string, ReadonlyArray<unknown>]> = []
const recording: Statement.Transformer = (self) => {
  sent.push(self.compile())
  return Effect.succeed(self)
}

/** The plan of a statement the server sends, with the parameters it sent. */
const explainSent = (text: string, params: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${text}`, params)
    return { statement: text.replace(/\s+/gu, " ").slice(0, 120), plan: "custom", fullScans: fullScans(planOf(rows)) } satisfies Explained
  })

/** Every statement of the money functions, explained. */
const explainFunctions = Effect.gen(function*() {
  const out: Array<Explained> = []
  for (const f of MoneyFunctions.all) {
    for (const [name, text] of Object.entries(f.statements)) out.push(...(yield* explainInside(f, name, text)))
  }
  return out
})

/**
 * What a request sends: a reservation on a limited key (its lease grant), its settlement (the
 * ledger flush), a cache-only record, `GET /generation`'s read and the embeddings cache's reads
 * and writes.
 */
const explainRequestPath = Effect.gen(function*() {
  const accounting = yield* Accounting
  const reports = yield* LedgerReports
  const cache = yield* EmbeddingCache
  sent.length = 0
  yield* Effect.provideService(Effect.gen(function*() {
    const reservation = yield* accounting.reserve({ keyId: "key-3", workspaceId: "ws-0", amountNanos: 1000n, byok: false })
    yield* accounting.settle(reservation, {
      generationId: "gen-plan-1", model: "test/embed", provider: "test", promptTokens: 1, totalTokens: 1, costNanos: 900n, isByok: false
    })
    yield* accounting.record({
      keyId: "key-3", workspaceId: "ws-0", generationId: "gen-3", model: "test/embed", provider: "test", promptTokens: 0,
      totalTokens: 0, isByok: false
    })
    yield* reports.generation("gen-3", ["ws-0"])
    yield* cache.getMany([["entry-1", "entry-2", "absent"]])
    yield* cache.setMany([["entry-new", { vector: VectorEncoding.fromStored({ text: "[0]", width: 1, encoding: "float" }), tokens: 1 }]])
  }), Statement.CurrentTransformer, recording)
  assert.isAbove(sent.length, 4)
  const kinds = sent.map(([text]) => text)
  assert.isTrue(kinds.some((t) => t.includes("switchyard_lease(")), "a lease was granted")
  assert.isTrue(kinds.some((t) => t.includes("switchyard_flush(")), "the ledger was flushed")
  const out: Array<Explained> = []
  // The process registry's heartbeat and sweep run every ten seconds beside the requests, not for them.
  for (const [text, params] of sent.filter(([text]) => !text.includes("gateway_processes"))) {
    out.push(yield* explainSent(text, params))
  }
  return out
})

// The accounting's own fibers (the ledger batch's) send with the context it was built in.
const Services = Layer.mergeAll(AccountingLive.layer, LedgerReports.layer, EmbeddingCache.layerSql).pipe(
  Layer.provide(Layer.succeedContext(Context.make(Statement.CurrentTransformer, recording)))
)

/** No full scan of a large table in any plan. */
const assertIndexed = (explained: ReadonlyArray<Explained>) => {
  const scans = explained.filter((e) => e.fullScans.length > 0).map((e) => `${e.statement} (${e.plan}): ${e.fullScans.join(", ")}`)
  assert.deepStrictEqual(scans, [])
}

/**
 * The statistics a running store has: on PostgreSQL autovacuum's ANALYZE, on SQLite the upkeep's
 * (`PRAGMA optimize`, `StoreUpkeep`).
 */
const upkeepAnalyze = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({ sqlite: () => StoreUpkeep.optimize(sql), orElse: () => sql`ANALYZE` })
})

/** Where the flush's former join of the ledger was planned as a hash join over a full scan. */
const small = 20_000

/** The flush as it read the cost of a row written before until `0011_money_functions`: by a join. */
const joinedFlush = (() => {
  const write = MoneyFunctions.switchyardFlush.statements.write
  return write.slice(0, write.lastIndexOf("SELECT i.generation")) + `SELECT i.generation,
      COALESCE(w.cost_nanos, e.cost_nanos)::text, w.generation_id IS NOT NULL
    FROM input i
    LEFT JOIN written w ON w.generation_id = i.generation
    LEFT JOIN ledger e ON w.generation_id IS NULL AND e.generation_id = i.generation`
})()

/**
 * The plan suite: every statement of the request, lease and flush paths on a store whose ledger
 * holds 20,000 rows (PL/pgSQL keeps the plans it makes first, so a plan made then must hold as the
 * ledger grows), then `ledgerRows`, each with the statistics it has and after ANALYZE.
 */
export const suite = (ledgerRows: number, timeout: number) => {
  const Seeded = Layer.effectDiscard(Effect.andThen(seed, grow(0, small))).pipe(Layer.provideMerge(sqlLayer()))
  layer(Seeded, { timeout, excludeTestServices: true })(`money plans up to ${ledgerRows} ledger rows (${storeKind})`, (it) => {
    it.effect(`on ${small} ledger rows, every money function statement finds its rows by index, before statistics and after ANALYZE`, () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        assertIndexed(yield* explainFunctions)
        yield* sql`ANALYZE`
        assertIndexed(yield* explainFunctions)
      }), timeout)

    it.effect(`on ${small} ledger rows, the check sees the full scan of the flush's former join`, () =>
      Effect.gen(function*() {
        const plans = yield* explainInside(MoneyFunctions.switchyardFlush, "joined", joinedFlush)
        assert.isTrue(plans.some((e) => e.fullScans.includes("ledger")), JSON.stringify(plans))
      }), timeout)

    it.effect(`on ${ledgerRows} ledger rows, every money function statement finds its rows by index, with the statistics of 20,000 and after the store's ANALYZE`, () =>
      Effect.gen(function*() {
        yield* grow(small, ledgerRows)
        assertIndexed(yield* explainFunctions)
        yield* upkeepAnalyze
        assertIndexed(yield* explainFunctions)
      }), timeout)

    it.effect(`on ${ledgerRows} ledger rows, every statement a request sends on the lease and flush paths finds its rows by index`, () =>
      Effect.gen(function*() {
        assertIndexed(yield* Effect.provide(explainRequestPath, Services))
      }), timeout)
  })
}
