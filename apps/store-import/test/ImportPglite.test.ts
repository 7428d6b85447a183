import { assert, describe, it } from "@effect/vitest"
import { migrate } from "@switchyard/server/store/database/Migrations"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { DatabaseSync } from "node:sqlite"
import { ImportFailed, importPglite } from "../src/ImportPglite.ts"
import * as PgliteClient from "../src/pglite/PgliteClient.ts"

const big = "9223372036854775807"
const at = Date.parse("2026-03-10T12:34:56.789Z")

/** A PGlite store as the earlier gateway left it: migrated, with a little of everything. */
const seedPglite = (dir: string) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO workspaces (id, slug, name, include_byok_in_budgets, cache, created_at) VALUES ('w', 'default', 'Default', true, NULL, ${new Date(at)})`
    yield* sql`INSERT INTO workspaces (id, slug, name, deleted_at) VALUES ('w-gone', 'default', 'Gone', now())`
    yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES ('u', 'admin', 'w')`
    yield* sql`INSERT INTO memberships (user_id, workspace_id, role) VALUES ('u', 'w', 'admin')`
    yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id, limit_nanos, limit_reset, disabled)
      VALUES ('k1', 'h1', 'management', 'm', 'l', 'u', 'w', NULL, NULL, false),
             ('k2', 'h2', 'standard', 's', 'l', 'u', 'w', ${big}::bigint, 'daily', true)`
    yield* sql`INSERT INTO credit_accounts (workspace_id, credits_nanos, usage_nanos, prepaid) VALUES ('w', 5000000000, 1234, true)`
    yield* sql`INSERT INTO credit_grants (id, workspace_id, amount_nanos, created_at) VALUES ('g', 'w', 5000000000, now())`
    yield* sql`INSERT INTO byok_credentials (id, workspace_id, provider, label, secret, sort_order, created_at)
      VALUES ('b', 'w', 'openai', 'sk-...abcd', 'v1.0011223344556677.aa.bb.cc', 0, now())`
    yield* sql`INSERT INTO workspace_budgets (id, workspace_id, interval, limit_nanos, created_at, updated_at) VALUES ('wb', 'w', 'daily', 7, now(), now())`
    for (let i = 0; i < 12_000; i += 1_000) {
      yield* sql`INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos, is_byok, created_at, latency_ms)
        SELECT 'gen-' || lpad(g::text, 6, '0'), 'k2', 'w', 'm', 'p', 3, 3, 100 + g, g % 7 = 0,
          ${new Date(at)}::timestamptz + make_interval(secs => g), 5 FROM generate_series(${i}::int, ${i + 999}::int) g`
    }
    yield* sql`INSERT INTO key_spend (key_id, day, spent_nanos, byok_nanos) VALUES ('k2', '-infinity', 1234, 5), ('k2', '2026-03-10', 1234, 5)`
    yield* sql`INSERT INTO workspace_spend (workspace_id, day, spent_nanos, byok_nanos) VALUES ('w', '-infinity', 1234, 5)`
    yield* sql`INSERT INTO ledger_daily (workspace_id, day, key_id, model, provider, is_byok, requests, prompt_tokens, total_tokens, cached_items, cached_tokens, cost_nanos)
      VALUES ('w', '2026-01-01', 'k2', 'm', 'p', false, 10, 30, 30, 0, 0, 999)`
    yield* sql`INSERT INTO ledger_pruned (singleton, before) VALUES (true, '2026-01-02T00:00:00Z')`
    yield* sql`INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner)
      VALUES ('hold', 'k2', 'w', 10, false, now(), now() + interval '1 hour', 'gone')`
  }).pipe(Effect.provide(Layer.effectDiscard(migrate).pipe(Layer.provideMerge(PgliteClient.layer(dir)))))))

const tempDataDir = () => Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-import-"))

describe("importing a PGlite data directory into the SQLite store", () => {
  it("copies every table but the cache, holds and processes, checks counts and sums, and leaves the old store", async () => {
    const dataDir = tempDataDir()
    try {
      await seedPglite(NodePath.join(dataDir, "pglite"))
      const lines: Array<string> = []
      const imported = await importPglite(dataDir, (line) => lines.push(line))
      assert.strictEqual(imported.file, NodePath.join(dataDir, "switchyard.db"))
      const byName = new Map(imported.tables.map((t) => [t.name, t]))
      assert.strictEqual(byName.get("ledger")?.rows, 12_000)
      assert.strictEqual(byName.get("ledger")?.sums.cost_nanos, String(12_000 * 100 + (11_999 * 12_000) / 2))
      assert.strictEqual(byName.get("api_keys")?.rows, 2)
      assert.isTrue(lines.some((l) => l.startsWith("ledger: 12000 rows")))
      assert.isFalse(Fs.existsSync(`${imported.file}.importing`))
      assert.isTrue(Fs.existsSync(NodePath.join(dataDir, "pglite", "PG_VERSION")))

      const db = new DatabaseSync(imported.file, { readOnly: true })
      try {
        const one = (sql: string) => db.prepare(sql).get() as Record<string, unknown>
        assert.deepStrictEqual({ ...one("SELECT include_byok_in_budgets AS b, cache, created_at FROM workspaces WHERE id = 'w'") }, { b: 1, cache: null, created_at: at })
        assert.deepStrictEqual(
          { ...one("SELECT CAST(limit_nanos AS text) AS l, disabled, limit_reset FROM api_keys WHERE id = 'k2'") },
          { l: big, disabled: 1, limit_reset: "daily" }
        )
        assert.deepStrictEqual({ ...one("SELECT created_at, is_byok FROM ledger WHERE generation_id = 'gen-000007'") }, { created_at: at + 7_000, is_byok: 1 })
        assert.deepStrictEqual(
          (db.prepare("SELECT day FROM key_spend ORDER BY day").all() as Array<{ day: string }>).map((r) => r.day),
          ["-infinity", "2026-03-10"]
        )
        assert.strictEqual(one("SELECT before FROM ledger_pruned").before, Date.parse("2026-01-02T00:00:00Z"))
        assert.strictEqual(one("SELECT count(*) AS n FROM holds").n, 0)
        assert.strictEqual(one("SELECT count(*) AS n FROM switchyard_migrations").n, one("SELECT max(migration_id) AS n FROM switchyard_migrations").n)
        // New keys continue the old keys' order.
        assert.strictEqual(one("SELECT seq FROM sqlite_sequence WHERE name = 'api_keys'").seq, 2)
      } finally {
        db.close()
      }

      // A second import refuses: the data directory has its SQLite store.
      const again = await importPglite(dataDir).then(() => undefined, (error: unknown) => error)
      assert.instanceOf(again, ImportFailed)
      assert.include((again as Error).message, "exists already")
    } finally {
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 180_000)

  it("refuses a directory without a PGlite store", async () => {
    const dataDir = tempDataDir()
    try {
      const failed = await importPglite(dataDir).then(() => undefined, (error: unknown) => error)
      assert.instanceOf(failed, ImportFailed)
      assert.include((failed as Error).message, "no PGlite store")
      assert.isFalse(Fs.existsSync(NodePath.join(dataDir, "switchyard.db")))
    } finally {
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
