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

layer(sqlLayer(), { timeout: 120_000 })(`store upkeep (${storeKind})`, (it) => {
  it.effect.skipIf(storeKind !== "pglite")(
    "on PGlite, every minute: ANALYZE and VACUUM of the tables that changed enough, nothing for the others",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const key = yield* seedKey()
        yield* insert(key, 1, 5_000)
        // The migrations analyzed the empty ledger.
        const { analyzed, vacuumed } = yield* ledgerStats
        assert.deepStrictEqual(yield* ledgerStats, { reltuples: 0, analyzed, vacuumed })
        yield* StoreUpkeep.start({ every: "1 minute" })

        yield* TestClock.adjust("59 seconds")
        yield* realWait(200)
        assert.deepStrictEqual(yield* ledgerStats, { reltuples: 0, analyzed, vacuumed })

        // 5,000 rows written: analyzed and vacuumed (marked all-visible) at the minute.
        yield* TestClock.adjust("1 second")
        const first = yield* settled((s) => s.analyzed === analyzed + 1 && s.vacuumed === vacuumed + 1)
        assert.deepStrictEqual(first, { reltuples: 5_000, analyzed: analyzed + 1, vacuumed: vacuumed + 1 })

        // 300 rows more is less than a tenth of the table: the next minute leaves it.
        yield* insert(key, 5_001, 5_300)
        yield* TestClock.adjust("1 minute")
        yield* realWait(300)
        assert.deepStrictEqual(yield* ledgerStats, first)

        // 600 more (900 since the last ANALYZE): analyzed again, not yet vacuumed (1,000 + 20 % inserted).
        yield* insert(key, 5_301, 5_900)
        yield* TestClock.adjust("1 minute")
        assert.deepStrictEqual(
          yield* settled((s) => s.analyzed === analyzed + 2),
          { reltuples: 5_900, analyzed: analyzed + 2, vacuumed: vacuumed + 1 }
        )
      }))
  )

  it.effect.skipIf(storeKind !== "postgres")("on PostgreSQL it leaves the work to autovacuum: no round runs", () =>
    Effect.scoped(Effect.gen(function*() {
      const key = yield* seedKey()
      yield* insert(key, 1, 5_000)
      const before = yield* ledgerStats
      yield* StoreUpkeep.start({ every: "1 minute" })
      yield* TestClock.adjust("10 minutes")
      yield* realWait(300)
      const after = yield* ledgerStats
      // Autovacuum may come by; the upkeep never does.
      assert.isAtMost(after.analyzed - before.analyzed + after.vacuumed - before.vacuumed, 2)
    }))
  )

  it("the thresholds are autovacuum's defaults", () => {
    const changes = { table: "ledger", live: 10_000, dead: 0, modified: 0, inserted: 0 }
    assert.deepStrictEqual(StoreUpkeep.due(changes), { analyze: false, vacuum: false })
    assert.deepStrictEqual(StoreUpkeep.due({ ...changes, modified: 1_050 }), { analyze: true, vacuum: false })
    assert.deepStrictEqual(StoreUpkeep.due({ ...changes, dead: 2_050 }), { analyze: false, vacuum: true })
    assert.deepStrictEqual(StoreUpkeep.due({ ...changes, inserted: 2_999 }), { analyze: false, vacuum: false })
    assert.deepStrictEqual(StoreUpkeep.due({ ...changes, inserted: 3_000 }), { analyze: false, vacuum: true })
  })
})
