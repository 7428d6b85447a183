import { describe, expect, it } from "@effect/vitest"
import { DatabaseSync } from "node:sqlite"
import { vi } from "vitest"
import { Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import * as SqliteClient from "../../src/store/sqlite/SqliteClient.ts"

const memory = SqliteClient.layer(":memory:")

describe("SqliteClient", () => {
  it.effect("binds booleans and dates, returns plain rows and reads bigints as text where cast", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(sql.driver).toBe("sqlite")
      yield* sql`CREATE TABLE t (id text PRIMARY KEY, flag integer NOT NULL, at bigint NOT NULL, amount bigint NOT NULL)`
      yield* sql`INSERT INTO t (id, flag, at, amount) VALUES (${"a"}, ${true}, ${new Date(1_700_000_000_000)}, ${"9007199254740993"})`
      const rows = yield* sql<{ id: string; flag: number; at: number; amount: string }>`
        SELECT id, flag, at, CAST(amount AS text) AS amount FROM t`
      expect(rows).toEqual([{ id: "a", flag: 1, at: 1_700_000_000_000, amount: "9007199254740993" }])
    }).pipe(Effect.provide(memory)))

  it.effect("rolls a failed transaction back and classifies a unique violation", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE u (id text PRIMARY KEY)`
      const exit = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO u (id) VALUES ('x')`
        yield* sql`INSERT INTO u (id) VALUES ('x')`
      })).pipe(Effect.exit)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(JSON.stringify(exit)).toContain("UniqueViolation")
      const rows = yield* sql<{ n: number }>`SELECT count(*) AS n FROM u`
      expect(rows[0]!.n).toBe(0)
    }).pipe(Effect.provide(memory)))

  // A lone request's flush is one transaction: were its statements prepared anew each time (the
  // cache dropped by BEGIN or COMMIT), a request alone would pay what concurrent ones share.
  it.effect("keeps a statement prepared across transactions", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE p (v integer)`
      const prepare = vi.spyOn(DatabaseSync.prototype, "prepare")
      try {
        const insert = (v: number) => sql.withTransaction(sql`INSERT INTO p (v) VALUES (${v})`)
        yield* insert(1)
        const prepared = prepare.mock.calls.filter(([text]) => /INSERT INTO p/u.test(String(text))).length
        expect(prepared).toBe(1)
        yield* insert(2)
        yield* insert(3)
        expect(prepare.mock.calls.filter(([text]) => /INSERT INTO p/u.test(String(text))).length).toBe(1)
        // SQLite prepares a kept statement again by itself after a schema change.
        yield* sql`CREATE INDEX p_v ON p (v)`
        yield* insert(4)
      } finally {
        prepare.mockRestore()
      }
      const rows = yield* sql<{ n: number }>`SELECT count(*) AS n FROM p`
      expect(rows[0]!.n).toBe(4)
    }).pipe(Effect.provide(memory)))

  it.effect("keeps its data in a WAL-journaled file that a second connection reads", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-sqlite-"))
      const file = NodePath.join(dir, "store.db")
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE k (v text)`
        yield* sql`INSERT INTO k (v) VALUES ('kept')`
        const mode = yield* sql<{ journal_mode: string }>`PRAGMA journal_mode`
        expect(mode[0]!.journal_mode).toBe("wal")
      }).pipe(Effect.provide(SqliteClient.layer(file)))
      const rows = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ v: string }>`SELECT v FROM k`
      }).pipe(Effect.provide(SqliteClient.layer(file)))
      expect(rows).toEqual([{ v: "kept" }])
      Fs.rmSync(dir, { recursive: true, force: true })
    }))
})
