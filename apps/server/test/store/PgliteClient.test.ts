import { PGlite } from "@electric-sql/pglite"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import * as SqlError from "effect/sql/SqlError"
import * as PgliteClient from "../../src/store/PgliteClient.ts"

/** One in-memory database per test, opened through the client under test. */
const withSql = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>, options: PgliteClient.PgliteOptions = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* f(sql)
  }).pipe(Effect.provide(PgliteClient.layer(undefined, options)))

const reasonOf = (exit: Exit.Exit<unknown, unknown>) => {
  assert.isTrue(Exit.isFailure(exit))
  const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
  assert.instanceOf(error, SqlError.SqlError)
  return (error as SqlError.SqlError).reason
}

const schema = `CREATE TABLE things (
  id bigint PRIMARY KEY,
  name text NOT NULL UNIQUE,
  big bigint,
  ratio double precision,
  ok boolean,
  at timestamptz,
  doc jsonb,
  tags text[],
  raw bytea
)`

describe("PgliteClient", () => {
  it.effect("returns rows exactly as PGlite's own query does", () =>
    withSql((sql) =>
      Effect.gen(function*() {
        yield* sql.unsafe(schema)
        const at = new Date("2026-01-02T03:04:05.678Z")
        const rows = [
          [1, "plain", 5n, 0.25, true, at, { a: [1, "x"], b: null }, ["p", "q"], new Uint8Array([0, 1, 255])],
          [2, "ünïcødé ✓ \u{1F600}", 9_007_199_254_740_993n, -1.5, false, "2026-05-06T07:08:09Z", { n: 1 }, [], new Uint8Array([])],
          [3, "nulls", null, null, null, null, null, null, null]
        ] as const
        for (const row of rows) {
          yield* sql.unsafe(
            "INSERT INTO things (id, name, big, ratio, ok, at, doc, tags, raw) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            row as unknown as Array<unknown>
          )
        }
        const mine = yield* sql.unsafe<Record<string, unknown>>("SELECT * FROM things WHERE id >= $1 ORDER BY id", [1])
        const reference = new PGlite()
        try {
          yield* Effect.promise(async () => {
            await reference.exec(schema)
            for (const row of rows) {
              await reference.query(
                "INSERT INTO things (id, name, big, ratio, ok, at, doc, tags, raw) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                row as unknown as Array<unknown>
              )
            }
          })
          const theirs = yield* Effect.promise(() => reference.query("SELECT * FROM things WHERE id >= $1 ORDER BY id", [1]))
          assert.deepStrictEqual(mine, theirs.rows as ReadonlyArray<Record<string, unknown>>)
          assert.strictEqual(mine[1]!.big, 9_007_199_254_740_993n)
          assert.strictEqual(mine[0]!.big, 5)
          assert.deepStrictEqual(mine[0]!.at, at)
          const values = yield* sql.unsafe("SELECT id, name FROM things WHERE id = $1", [2]).values
          assert.deepStrictEqual(values, [[2, "ünïcødé ✓ \u{1F600}"]])
        } finally {
          yield* Effect.promise(() => reference.close())
        }
      })
    ), 60_000)

  it.effect("maps constraint and syntax errors and keeps working after them", () =>
    withSql((sql) =>
      Effect.gen(function*() {
        yield* sql.unsafe("CREATE TABLE u (id int PRIMARY KEY, n int CHECK (n > 0))")
        const insert = (id: number, n: number) => sql.unsafe("INSERT INTO u (id, n) VALUES ($1, $2)", [id, n])
        yield* insert(1, 1)
        const duplicate = reasonOf(yield* Effect.exit(insert(1, 2)))
        assert.strictEqual(duplicate._tag, "UniqueViolation")
        assert.strictEqual((duplicate as SqlError.UniqueViolation).constraint, "u_pkey")
        assert.strictEqual(reasonOf(yield* Effect.exit(insert(2, -1)))._tag, "ConstraintError")
        assert.strictEqual(reasonOf(yield* Effect.exit(sql.unsafe("SELECT nope FROM u")))._tag, "SqlSyntaxError")
        yield* insert(2, 2)
        const rows = yield* sql.unsafe<{ count: number }>("SELECT count(*)::int AS count FROM u")
        assert.deepStrictEqual(rows, [{ count: 2 }])
      })
    ), 60_000)

  it.effect("rolls a failed transaction back and commits a good one", () =>
    withSql((sql) =>
      Effect.gen(function*() {
        yield* sql.unsafe("CREATE TABLE t (id int PRIMARY KEY)")
        const insert = (id: number) => sql.unsafe("INSERT INTO t (id) VALUES ($1)", [id])
        const failed = yield* Effect.exit(sql.withTransaction(Effect.andThen(insert(1), insert(1))))
        assert.isTrue(Exit.isFailure(failed))
        yield* sql.withTransaction(Effect.andThen(insert(1), insert(2)))
        const rows = yield* sql.unsafe<{ id: number }>("SELECT id FROM t ORDER BY id")
        assert.deepStrictEqual(rows, [{ id: 1 }, { id: 2 }])
      })
    ), 60_000)

  it.effect("prepares a statement again when a schema change alters its result", () =>
    withSql((sql) =>
      Effect.gen(function*() {
        yield* sql.unsafe("CREATE TABLE s (id int PRIMARY KEY)")
        yield* sql.unsafe("INSERT INTO s (id) VALUES ($1)", [1])
        const select = sql.unsafe<Record<string, unknown>>("SELECT * FROM s WHERE id = $1", [1])
        assert.deepStrictEqual(yield* select, [{ id: 1 }])
        yield* sql.unsafe("ALTER TABLE s ADD COLUMN label text NOT NULL DEFAULT 'x'")
        assert.deepStrictEqual(yield* select, [{ id: 1, label: "x" }])
      })
    ), 60_000)

  it.effect("keeps answering correctly past the prepared-statement limit", () =>
    withSql((sql) =>
      Effect.gen(function*() {
        for (let i = 0; i < 200; i++) {
          const rows = yield* sql.unsafe<{ v: number }>(`SELECT $1::int + ${i} AS v`, [1])
          assert.deepStrictEqual(rows, [{ v: i + 1 }])
        }
        assert.deepStrictEqual(yield* sql.unsafe<{ v: number }>("SELECT $1::int + 0 AS v", [5]), [{ v: 5 }])
      })
    ), 60_000)

  it.effect("runs scripts and statements without parameters", () =>
    withSql((sql) =>
      Effect.gen(function*() {
        const last = yield* sql.unsafe<{ b: number }>("CREATE TABLE m (a int); INSERT INTO m VALUES (7); SELECT a * 2 AS b FROM m").unprepared
        assert.deepStrictEqual(last, [{ b: 14 }])
        assert.deepStrictEqual(yield* sql<{ a: number }>`SELECT a FROM m`, [{ a: 7 }])
        assert.deepStrictEqual(yield* sql.unsafe("SELECT 1 AS one WHERE false"), [])
      })
    ), 60_000)

  it.effect("opens and answers with PGlite kept on baseline WebAssembly code", () =>
    withSql((sql) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* sql.unsafe<{ v: number }>("SELECT $1::int * 2 AS v", [21]), [{ v: 42 }])
      }), { baselineCode: true }), 60_000)
})
