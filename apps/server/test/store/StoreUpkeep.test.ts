import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as StoreUpkeep from "../../src/store/StoreUpkeep.ts"
import { seedKey, sqlLayer } from "../support/MoneyStore.ts"
import { storeKind } from "../support/TestServer.ts"

/** A real-time wait: the upkeep's statements take real time, whatever the clock says. */
const realWait = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const ledgerStats = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`SELECT pg_stat_force_next_flush()`
  const rows = yield* sql<{ reltuples: number; analyzed: number; vacuumed: number }>`SELECT c.reltuples::float8 AS reltuples,
      s.analyze_count::int AS analyzed, s.vacuum_count::int AS vacuumed
    FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.relname = 'ledger'`
  return rows[0]!
})

/** The ledger's statistics once the upkeep's statements ran (they take real time, not the clock's). */
const settled = (done: (s: Effect.Success<typeof ledgerStats>) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      const stats = yield* ledgerStats
      if (done(stats)) return stats
      yield* realWait(50)
    }
    return yield* ledgerStats
  })

const insert = (key: { keyId: string; workspaceId: string }, from: number, to: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos, is_byok)
      SELECT 'gen-' || g, ${key.keyId}, ${key.workspaceId}, 'm', 'p', 1, 1, 0, false FROM generate_series(${from}::int, ${to}::int) g`
  })

/** How many buckets the ledger's `generation_id` histogram has: the statistics target of the last ANALYZE. */
const histogramBuckets = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ n: number | null }>`SELECT array_length(histogram_bounds::text::text[], 1) - 1 AS n
    FROM pg_stats WHERE tablename = 'ledger' AND attname = 'generation_id'`
  return rows[0]?.n ?? null
})

layer(sqlLayer(), { timeout: 120_000 })(`store upkeep (${storeKind})`, (it) => {
  it.effect.skipIf(storeKind !== "pglite")(
    "on PGlite: a large never-vacuumed table vacuumed at start, then one statement a look, the most overdue first; a look a minute when idle, five seconds after a step",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const key = yield* seedKey()
        // 50,000 rows: about 1,350 pages, more than a catch-up's 1,000.
        yield* insert(key, 1, 50_000)
        // The migrations analyzed the empty ledger.
        const { analyzed, vacuumed } = yield* ledgerStats
        assert.deepStrictEqual(yield* ledgerStats, { reltuples: 0, analyzed, vacuumed })

        // The catch-up is done when start returns, before any look.
        yield* StoreUpkeep.start
        assert.deepStrictEqual(yield* ledgerStats, { reltuples: 50_000, analyzed, vacuumed: vacuumed + 1 })

        yield* TestClock.adjust("59 seconds")
        yield* realWait(200)
        assert.deepStrictEqual(yield* ledgerStats, { reltuples: 50_000, analyzed, vacuumed: vacuumed + 1 })

        // 50,000 rows changed since the last ANALYZE: analyzed at the first look, on a sample of 3,000 rows.
        yield* TestClock.adjust("1 second")
        const first = yield* settled((s) => s.analyzed === analyzed + 1)
        assert.deepStrictEqual(first, { reltuples: 50_000, analyzed: analyzed + 1, vacuumed: vacuumed + 1 })
        assert.strictEqual(yield* histogramBuckets, StoreUpkeep.statisticsTarget)
        // The smaller target was the ANALYZE's alone.
        assert.deepStrictEqual(yield* sql`SHOW default_statistics_target`, [{ default_statistics_target: "100" }])

        // Five seconds after the step, a look finds nothing due; the next is a minute later.
        yield* realWait(200)
        yield* TestClock.adjust("5 seconds")
        yield* realWait(300)
        assert.deepStrictEqual(yield* ledgerStats, first)

        // 10,000 rows more: a VACUUM is due (at most 10,000 inserted rows, where autovacuum waits for
        // 1,000 + 20 % = 11,000) and an ANALYZE more so (10,000 of 50 + 10 %)...
        yield* insert(key, 50_001, 60_000)
        yield* TestClock.adjust("59 seconds")
        yield* realWait(300)
        assert.deepStrictEqual(yield* ledgerStats, first)
        // ...the ANALYZE at the look a minute after the last...
        yield* TestClock.adjust("1 second")
        const second = yield* settled((s) => s.analyzed === analyzed + 2)
        // The row count is estimated from the sample's pages.
        assert.closeTo(second.reltuples, 60_000, 600)
        assert.deepStrictEqual(second, { reltuples: second.reltuples, analyzed: analyzed + 2, vacuumed: vacuumed + 1 })
        yield* realWait(300)
        assert.deepStrictEqual(yield* ledgerStats, second)

        // ...and the VACUUM five seconds later.
        yield* TestClock.adjust("5 seconds")
        const third = yield* settled((s) => s.vacuumed === vacuumed + 2)
        assert.deepStrictEqual(third, { reltuples: third.reltuples, analyzed: analyzed + 2, vacuumed: vacuumed + 2 })
      }))
  )

  it.effect.skipIf(storeKind !== "postgres")("on PostgreSQL it leaves the work to autovacuum: no step runs", () =>
    Effect.scoped(Effect.gen(function*() {
      const key = yield* seedKey()
      yield* insert(key, 1, 50_000)
      const before = yield* ledgerStats
      yield* StoreUpkeep.start
      yield* TestClock.adjust("10 minutes")
      yield* realWait(300)
      const after = yield* ledgerStats
      // Autovacuum may come by; the upkeep never does.
      assert.isAtMost(after.analyzed - before.analyzed + after.vacuumed - before.vacuumed, 2)
    }))
  )

  it("VACUUM at autovacuum's default thresholds or 10,000 rows, whichever is less; ANALYZE at autovacuum's", () => {
    const small = { table: "ledger", live: 10_000, dead: 0, modified: 0, inserted: 0, unvisited: 0 }
    assert.deepStrictEqual(StoreUpkeep.due(small), { analyze: false, vacuum: false })
    assert.deepStrictEqual(StoreUpkeep.due({ ...small, modified: 1_049 }), { analyze: false, vacuum: false })
    assert.deepStrictEqual(StoreUpkeep.due({ ...small, modified: 1_050 }), { analyze: true, vacuum: false })
    assert.deepStrictEqual(StoreUpkeep.due({ ...small, dead: 2_049 }), { analyze: false, vacuum: false })
    assert.deepStrictEqual(StoreUpkeep.due({ ...small, dead: 2_050 }), { analyze: false, vacuum: true })
    assert.deepStrictEqual(StoreUpkeep.due({ ...small, inserted: 2_999 }), { analyze: false, vacuum: false })
    assert.deepStrictEqual(StoreUpkeep.due({ ...small, inserted: 3_000 }), { analyze: false, vacuum: true })
    const large = { ...small, live: 1_000_000 }
    assert.deepStrictEqual(StoreUpkeep.due({ ...large, inserted: 9_999, dead: 9_999 }), { analyze: false, vacuum: false })
    assert.deepStrictEqual(StoreUpkeep.due({ ...large, inserted: 10_000 }), { analyze: false, vacuum: true })
    assert.deepStrictEqual(StoreUpkeep.due({ ...large, dead: 10_000 }), { analyze: false, vacuum: true })
    assert.deepStrictEqual(StoreUpkeep.due({ ...large, modified: 100_049 }), { analyze: false, vacuum: false })
    assert.deepStrictEqual(StoreUpkeep.due({ ...large, modified: 100_050 }), { analyze: true, vacuum: false })
  })

  it("the steps due, the most overdue first", () => {
    const none = { dead: 0, modified: 0, inserted: 0, unvisited: 0 }
    assert.deepStrictEqual(
      StoreUpkeep.steps([
        { ...none, table: "ledger", live: 1_000_000, inserted: 15_000, modified: 15_000 },
        { ...none, table: "holds", live: 1_000, dead: 1_000, modified: 2_000 },
        { ...none, table: "key_spend", live: 100_000, modified: 9_000 }
      ]),
      [
        { table: "holds", statement: "ANALYZE" }, // 2,000 of 150
        { table: "holds", statement: "VACUUM" }, // 1,000 of 250
        { table: "ledger", statement: "VACUUM" } // 15,000 of 10,000; its ANALYZE (15,000 of 100,050) and key_spend's (9,000 of 10,050) wait
      ]
    )
  })
})
