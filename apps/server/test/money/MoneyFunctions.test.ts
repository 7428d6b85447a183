import { PgClient } from "@effect/sql-pg"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import * as MoneyFunctions from "../../src/store/MoneyFunctions.ts"
import { migrate, migrations } from "../../src/store/Migrations.ts"
import { dropDatabase, freshDatabase, storeKind } from "../support/TestServer.ts"

/**
 * An empty, unmigrated PostgreSQL database: the test decides which migrations run. PostgreSQL keeps
 * its migration history; a SQLite store starts from the baseline (test/store/SqliteSchema.test.ts).
 */
const driver = Layer.unwrap(Effect.gen(function*() {
    const url = yield* Effect.acquireRelease(Effect.promise(() => freshDatabase()), (url) => Effect.promise(() => dropDatabase(url)))
    return PgClient.layer({ url: Redacted.make(url), maxConnections: 4 }) as Layer.Layer<SqlClient.SqlClient, unknown>
  }))

const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0011"))
const migrateBefore = Migrator.make({})({ loader: Migrator.fromRecord(before), table: "switchyard_migrations" })

/** The body of a function as `CREATE FUNCTION` gives it (between the dollar quotes). */
const bodyOf = (f: MoneyFunctions.MoneyFunction) => {
  const text = MoneyFunctions.definition(f)
  return text.slice(text.indexOf("$$") + 2, text.lastIndexOf("$$"))
}

describe.skipIf(storeKind !== "postgres")("PostgreSQL's migration history", () => {
  layer(driver, { timeout: 120_000, excludeTestServices: true })(`the money functions (${storeKind})`, (it) => {
    it.effect("a migration drops the functions of earlier versions, and each live one is created as MoneyFunctions defines it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrateBefore
        // As a store created by an earlier version has them.
        yield* sql.unsafe(`CREATE FUNCTION switchyard_batch(p_ops jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT p_ops $$`)
        yield* sql.unsafe(`CREATE FUNCTION switchyard_settle(p_hold text, p_key text) RETURNS void LANGUAGE sql AS $$ SELECT $$`)
        yield* migrate
        const found = yield* sql<{ name: string; body: string }>`SELECT proname AS name, prosrc AS body FROM pg_proc
          WHERE proname LIKE 'switchyard\\_%' ORDER BY proname`
        assert.deepStrictEqual(found.map((r) => r.name), MoneyFunctions.all.map((f) => f.name).sort())
        for (const f of MoneyFunctions.all) {
          assert.strictEqual(found.find((r) => r.name === f.name)?.body, bodyOf(f), f.name)
        }
      }))

    it("a change to a money function comes with a migration that applies it", () => {
      // Changed MoneyFunctions.ts? Ship it with a migration (stores run `MoneyFunctions.replace` after
      // any migration ran, so stores migrated before get the change); then update this.
      assert.strictEqual(MoneyFunctions.digest, "9d09cdfd295361e73e1130446a969f2a24e3b6f84aea44ea98fe6f04327347e0")
    })
  })
})
