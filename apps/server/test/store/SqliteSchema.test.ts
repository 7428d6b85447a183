import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { migrate, migrations } from "../../src/store/database/Migrations.ts"
import * as SqliteClient from "../../src/store/sqlite/SqliteClient.ts"
import { dropDatabase, freshDatabase, postgresReachable } from "../support/TestServer.ts"

const migratedSqlite = Layer.effectDiscard(migrate).pipe(Layer.provideMerge(SqliteClient.layer(":memory:")))

interface Shape {
  readonly columns: ReadonlyArray<string>
  readonly indexes: ReadonlyArray<string>
}

const sqliteShape = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = yield* sql<{ t: string; c: string }>`SELECT m.name AS t, p.name AS c
    FROM sqlite_master m, pragma_table_info(m.name) p
    WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT IN ('switchyard_migrations', 'holds_fence')`
  const indexes = yield* sql<{ name: string }>`SELECT name FROM sqlite_master
    WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%'`
  return {
    columns: columns.map((r) => `${r.t}.${r.c}`).sort(),
    indexes: indexes.map((r) => r.name).sort()
  } satisfies Shape
})

const postgresShape = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = yield* sql<{ t: string; c: string }>`SELECT table_name AS t, column_name AS c
    FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name <> 'switchyard_migrations'`
  // The indexes a migration created by name (not those behind a primary key or a UNIQUE constraint).
  const indexes = yield* sql<{ name: string }>`SELECT i.indexname AS name FROM pg_indexes i
    WHERE i.schemaname = current_schema()
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`
  return {
    columns: columns.map((r) => `${r.t}.${r.c}`).sort(),
    indexes: indexes.map((r) => r.name).sort()
  } satisfies Shape
})

describe("SQLite schema", () => {
  it.effect("the baseline migrates an empty file once, with every foreign key resolvable", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrate
      const ran = yield* sql<{ migration_id: number }>`SELECT migration_id FROM switchyard_migrations ORDER BY migration_id`
      expect(ran.map((r) => r.migration_id)).toEqual(Object.keys(migrations).map((name) => Number(name.slice(0, 4))))
      expect(yield* sql`PRAGMA foreign_key_check`).toEqual([])
      const shape = yield* sqliteShape
      expect(shape.columns).toContain("ledger.cached_tokens")
      expect(shape.columns).toContain("holds.fence")
      expect(shape.indexes).toContain("ledger_key_time")
    }).pipe(Effect.provide(migratedSqlite)))

  it.effect("keeps booleans, timestamps and money in its types, and refuses a value of the wrong type", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const at = new Date(1_790_000_000_123)
      yield* sql`INSERT INTO workspaces (id, slug, name, include_byok_in_budgets, created_at) VALUES ('w', 'w', 'W', ${true}, ${at})`
      const rows = yield* sql<{ include_byok_in_budgets: number; created_at: number }>`SELECT include_byok_in_budgets, created_at FROM workspaces`
      expect(rows[0]).toEqual({ include_byok_in_budgets: 1, created_at: at.getTime() })
      expect(new Date(rows[0]!.created_at).toISOString()).toBe(at.toISOString())
      const refused = yield* sql`INSERT INTO workspaces (id, slug, name, created_at) VALUES ('x', 'x', 'X', 'yesterday')`.pipe(Effect.flip)
      expect(refused.message).toMatch(/cannot store TEXT value in INTEGER column/)
      // A deleted workspace frees its slug, as the partial unique index does on PostgreSQL.
      yield* sql`UPDATE workspaces SET deleted_at = ${at} WHERE id = 'w'`
      yield* sql`INSERT INTO workspaces (id, slug, name) VALUES ('w2', 'w', 'W')`
      // The all-time spend row sorts before every day, as PostgreSQL's -infinity date does.
      yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES ('u', 'U', 'w2')`
      yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id, limit_nanos)
        VALUES ('k', 'h', 'standard', 'n', 'l', 'u', 'w2', ${"9223372036854775807"})`
      yield* sql`INSERT INTO key_spend (key_id, day, spent_nanos) VALUES ('k', '-infinity', 5), ('k', '2026-11-01', 7)`
      const since = yield* sql<{ day: string }>`SELECT day FROM key_spend WHERE day < '2026-01-01'`
      expect(since).toEqual([{ day: "-infinity" }])
      const limit = yield* sql<{ limit_nanos: string }>`SELECT CAST(limit_nanos AS text) AS limit_nanos FROM api_keys`
      expect(limit[0]!.limit_nanos).toBe("9223372036854775807")
    }).pipe(Effect.provide(migratedSqlite)))

  it.effect("has the same tables, columns and named indexes as PostgreSQL's migrations build", () =>
    Effect.gen(function*() {
      if (!(yield* Effect.promise(postgresReachable))) {
        if (process.env.CI !== undefined) return yield* Effect.die(new Error("PostgreSQL is not reachable under CI"))
        console.warn("PostgreSQL is not reachable: the schema comparison is skipped")
        return
      }
      const sqlite = yield* sqliteShape.pipe(Effect.provide(migratedSqlite))
      const postgres = yield* Effect.acquireUseRelease(
        Effect.promise(() => freshDatabase()),
        (url) =>
          postgresShape.pipe(
            Effect.provide(Layer.effectDiscard(migrate).pipe(
              Layer.provideMerge(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 }))
            ))
          ),
        (url) => Effect.promise(() => dropDatabase(url))
      )
      expect(sqlite.columns).toEqual(postgres.columns)
      expect(sqlite.indexes).toEqual(postgres.indexes)
    }), 60_000)
})
