import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { SqlClient } from "effect/sql"
import { migrate } from "../../apps/server/src/store/database/Migrations.ts"
import * as SqliteClient from "../../apps/server/src/store/sqlite/SqliteClient.ts"
import * as PgliteClient from "../../apps/store-import/src/pglite/PgliteClient.ts"
import * as Seed from "../src/Seed.ts"

const target: Seed.Target = { keyId: "key-bench", workspaceId: "ws-bench", userId: "user-bench" }

/** The migrated schema and the benchmark's own workspace, user and standard key, as Bootstrap writes them. */
const store = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* migrate
  yield* sql`INSERT INTO workspaces (id, slug, name) VALUES (${target.workspaceId}, 'default', 'Default')`
  yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES (${target.userId}, 'admin', ${target.workspaceId})`
  yield* sql`INSERT INTO credit_accounts (workspace_id, credits_nanos) VALUES (${target.workspaceId}, 1000000000000)`
  yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id)
    VALUES ('key-admin', 'h0', 'management', 'admin', 'l', ${target.userId}, ${target.workspaceId}),
      (${target.keyId}, 'h1', 'standard', 'bench', 'l', ${target.userId}, ${target.workspaceId})`
  return sql
})

describe("Seed", () => {
  // PostgreSQL's statements, on PGlite (a PostgreSQL engine in this process).
  it.effect("writes the ledger rows with spend counters, usage and holds that match them, on the migrated schema", () =>
    Effect.gen(function*() {
      const sql = yield* store
      const rows = 5003
      const seeded = yield* Seed.seedWith({ rows, fillerKeys: 12, fillerWorkspaces: 3, days: 3 })
      assert.strictEqual(seeded.rows, rows)
      const one = <A>(q: Effect.Effect<ReadonlyArray<A>, unknown>) => Effect.map(Effect.orDie(q), (r) => r[0]!)
      const ledger = yield* one(sql<{ n: string; bench: string; future: string }>`
        SELECT count(*)::text AS n, count(*) FILTER (WHERE key_id = ${target.keyId})::text AS bench,
          count(*) FILTER (WHERE created_at > now())::text AS future FROM ledger`)
      assert.strictEqual(Number(ledger.n), rows)
      assert.strictEqual(Number(ledger.bench), Seed.benchKeyRows(rows, 12))
      assert.strictEqual(seeded.benchKeyRows, Number(ledger.bench))
      assert.strictEqual(Number(ledger.future), 0)
      // Every key's and workspace's counters, per day and all-time, equal its ledger rows' sums.
      for (const [table, column] of [["key_spend", "key_id"], ["workspace_spend", "workspace_id"]] as const) {
        const mismatched = yield* one(sql<{ n: string }>`
          SELECT count(*)::text AS n FROM (
            SELECT ${sql(column)} AS owner, (created_at AT TIME ZONE 'UTC')::date AS day,
                SUM(cost_nanos) FILTER (WHERE NOT is_byok) AS spent, SUM(cost_nanos) FILTER (WHERE is_byok) AS byok
              FROM ledger GROUP BY 1, 2
            UNION ALL
            SELECT ${sql(column)}, '-infinity'::date, SUM(cost_nanos) FILTER (WHERE NOT is_byok), SUM(cost_nanos) FILTER (WHERE is_byok)
              FROM ledger GROUP BY 1
          ) l FULL JOIN ${sql(table)} s ON s.${sql(column)} = l.owner AND s.day = l.day
          WHERE s.spent_nanos IS DISTINCT FROM COALESCE(l.spent, 0) OR s.byok_nanos IS DISTINCT FROM COALESCE(l.byok, 0)`)
        assert.strictEqual(Number(mismatched.n), 0, table)
      }
      // Every row's key and workspace exist, though the seed skips the foreign-key triggers.
      const orphans = yield* one(sql<{ n: string }>`
        SELECT count(*)::text AS n FROM ledger l
          WHERE NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.id = l.key_id AND k.workspace_id = l.workspace_id)
            OR NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = l.workspace_id)`)
      assert.strictEqual(Number(orphans.n), 0)
      const usage = yield* one(sql<{ n: string }>`
        SELECT count(*)::text AS n FROM credit_accounts a
          LEFT JOIN (SELECT workspace_id, SUM(cost_nanos) AS total FROM ledger WHERE NOT is_byok GROUP BY 1) u ON u.workspace_id = a.workspace_id
          WHERE a.usage_nanos <> COALESCE(u.total, 0)`)
      assert.strictEqual(Number(usage.n), 0)
      const holds = yield* one(sql<{ n: string; live: string; bench: string }>`
        SELECT count(*)::text AS n, count(*) FILTER (WHERE expires_at > now())::text AS live,
          count(*) FILTER (WHERE key_id = ${target.keyId})::text AS bench FROM holds`)
      assert.strictEqual(Number(holds.n), seeded.holds)
      assert.isAbove(Number(holds.live), 0)
      assert.isBelow(Number(holds.live), Number(holds.n))
      assert.strictEqual(Number(holds.bench), 0)
      assert.isAbove(seeded.ledgerBytes, 0)
      // A second seed is refused by the ids already there rather than doubling the counters.
      const again = yield* Effect.exit(Seed.seedWith({ rows: 10, fillerKeys: 12, fillerWorkspaces: 3 }))
      assert.isTrue(again._tag === "Failure")
      assert.strictEqual(Number((yield* one(sql<{ n: string }>`SELECT count(*)::text AS n FROM ledger`)).n), rows)
    }).pipe(Effect.provide(PgliteClient.layer(undefined))))

  it.effect("on SQLite, writes the same rows in the baseline's types, with counters, usage and holds that match them", () =>
    Effect.gen(function*() {
      const sql = yield* store
      const rows = 5003
      // Near midnight UTC, so that three days of rows fall on four days.
      const now = Date.UTC(2026, 10, 26, 23, 30)
      yield* TestClock.setTime(now)
      const seeded = yield* Seed.seedWith({ rows, fillerKeys: 12, fillerWorkspaces: 3, days: 3 })
      assert.strictEqual(seeded.rows, rows)
      const one = <A>(q: Effect.Effect<ReadonlyArray<A>, unknown>) => Effect.map(Effect.orDie(q), (r) => r[0]!)
      const ledger = yield* one(sql<{ n: number; bench: number; future: number; oldest: number; byok: number; types: number }>`
        SELECT count(*) AS n, SUM(key_id = ${target.keyId}) AS bench, SUM(created_at > ${now}) AS future,
          MIN(created_at) AS oldest, SUM(is_byok) AS byok,
          SUM(typeof(created_at) = 'integer' AND typeof(is_byok) = 'integer' AND is_byok IN (0, 1)) AS types FROM ledger`)
      assert.strictEqual(Number(ledger.n), rows)
      assert.strictEqual(Number(ledger.bench), Seed.benchKeyRows(rows, 12))
      assert.strictEqual(seeded.benchKeyRows, Number(ledger.bench))
      assert.strictEqual(Number(ledger.future), 0)
      assert.strictEqual(Number(ledger.types), rows)
      assert.strictEqual(Number(ledger.byok), Math.floor(rows / 50))
      assert.isAtLeast(Number(ledger.oldest), now - 3 * 86_400_000 - 1000)
      // Every key's and workspace's counters, per day and all-time, equal its ledger rows' sums.
      for (const [table, column] of [["key_spend", "key_id"], ["workspace_spend", "workspace_id"]] as const) {
        const sums = (yield* Effect.orDie(sql<{ owner: string; day: string; spent: number; byok: number }>`
          SELECT ${sql(column)} AS owner, date(created_at / 1000, 'unixepoch') AS day,
              SUM(CASE WHEN is_byok = 0 THEN cost_nanos ELSE 0 END) AS spent, SUM(CASE WHEN is_byok = 1 THEN cost_nanos ELSE 0 END) AS byok
            FROM ledger GROUP BY 1, 2
          UNION ALL
          SELECT ${sql(column)}, '-infinity', SUM(CASE WHEN is_byok = 0 THEN cost_nanos ELSE 0 END), SUM(CASE WHEN is_byok = 1 THEN cost_nanos ELSE 0 END)
            FROM ledger GROUP BY 1`)).map((r) => `${r.owner}|${r.day}|${r.spent}|${r.byok}`).sort()
        const counters = (yield* Effect.orDie(sql<{ owner: string; day: string; spent: number; byok: number }>`
          SELECT ${sql(column)} AS owner, day, spent_nanos AS spent, byok_nanos AS byok FROM ${sql(table)}`))
          .map((r) => `${r.owner}|${r.day}|${r.spent}|${r.byok}`).sort()
        assert.deepStrictEqual(counters, sums, table)
        assert.deepStrictEqual([...new Set(counters.map((c) => c.split("|")[1]))].sort(), ["-infinity", "2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26"], table)
      }
      const usage = yield* one(sql<{ n: number }>`
        SELECT count(*) AS n FROM credit_accounts a
          LEFT JOIN (SELECT workspace_id, SUM(cost_nanos) AS total FROM ledger WHERE is_byok = 0 GROUP BY 1) u ON u.workspace_id = a.workspace_id
          WHERE a.usage_nanos <> COALESCE(u.total, 0)`)
      assert.strictEqual(Number(usage.n), 0)
      const holds = yield* one(sql<{ n: number; live: number; bench: number; fences: number; top: number; counter: number }>`
        SELECT count(*) AS n, SUM(expires_at > ${now}) AS live, SUM(key_id = ${target.keyId}) AS bench,
          count(DISTINCT fence) AS fences, MAX(fence) AS top, (SELECT value FROM holds_fence) AS counter FROM holds`)
      assert.strictEqual(Number(holds.n), seeded.holds)
      assert.isAbove(Number(holds.live), 0)
      assert.isBelow(Number(holds.live), Number(holds.n))
      assert.strictEqual(Number(holds.bench), 0)
      // Every hold its own fencing token, and the counter past them all.
      assert.strictEqual(Number(holds.fences), seeded.holds)
      assert.strictEqual(Number(holds.counter), Number(holds.top))
      assert.isAbove(seeded.ledgerBytes, 0)
      // The foreign keys (on in the server's client) hold.
      assert.strictEqual((yield* Effect.orDie(sql`PRAGMA foreign_key_check`)).length, 0)
      const again = yield* Effect.exit(Seed.seedWith({ rows: 10, fillerKeys: 12, fillerWorkspaces: 3 }))
      assert.isTrue(again._tag === "Failure")
      assert.strictEqual(Number((yield* one(sql<{ n: number }>`SELECT count(*) AS n FROM ledger`)).n), rows)
    }).pipe(Effect.provide(SqliteClient.layer(":memory:"))))

  it("refuses a seed of no rows", () => {
    assert.throws(() => Seed.statements({ rows: 0 }, target), /at least one row/)
    assert.throws(() => Seed.sqliteStatements({ rows: 0 }, target, 0), /at least one row/)
  })
})
