import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { migrate } from "../../apps/server/src/store/Migrations.ts"
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

  it("refuses a seed of no rows", () => {
    assert.throws(() => Seed.statements({ rows: 0 }, target), /at least one row/)
  })
})
