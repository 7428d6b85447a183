import { PGlite } from "@electric-sql/pglite"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as PgliteClient from "../../src/store/PgliteClient.ts"
import * as PgliteDurability from "../../src/store/PgliteDurability.ts"
import { freshPgliteDir } from "../support/TestServer.ts"

const settingsOf = (dataDir: string, options: PgliteClient.PgliteOptions) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [fsync] = yield* sql<{ fsync: string }>`SHOW fsync`
    const [method] = yield* sql<{ wal_sync_method: string }>`SHOW wal_sync_method`
    return { fsync: fsync!.fsync, method: method!.wal_sync_method }
  }).pipe(Effect.provide(PgliteClient.layer(dataDir, options)))

/** A PGlite database on disk opened as the client opens it, with the filesystem's fsync installed. */
const openDurable = async (dataDir: string) => {
  const db = new PGlite(dataDir, {
    postgresqlconf: [...PgliteDurability.settings],
    startParams: PgliteDurability.startParams(PGlite.defaultStartParams)
  })
  await db.waitReady
  return { db, durability: PgliteDurability.PgliteDurability.install(db) }
}

describe("PgliteDurability", () => {
  it.effect("a data directory runs with fsync on by default, and off on request", () =>
    Effect.gen(function*() {
      const durable = yield* settingsOf(yield* Effect.promise(() => freshPgliteDir("durable")), {})
      assert.deepStrictEqual(durable, { fsync: "on", method: "fsync" })
      const relaxed = yield* settingsOf(yield* Effect.promise(() => freshPgliteDir("relaxed")), { fsync: false })
      assert.strictEqual(relaxed.fsync, "off")
    }), 120_000)

  it("a commit is flushed to disk once; a read-only statement needs no flush", async () => {
    const { db, durability } = await openDurable(await freshPgliteDir("flush"))
    try {
      await db.exec("CREATE TABLE t (x integer)")
      await durability.flush()
      const before = durability.flushes
      await db.query("INSERT INTO t VALUES (1)")
      await durability.flush()
      assert.strictEqual(durability.flushes, before + 1)
      // Nothing new committed: nothing to flush.
      await durability.flush()
      await db.query("SELECT * FROM t")
      await durability.flush()
      assert.strictEqual(durability.flushes, before + 1)
    } finally {
      await db.close()
    }
  }, 120_000)

  it("concurrent callers share the flush that covers their commits", async () => {
    const { db, durability } = await openDurable(await freshPgliteDir("shared"))
    try {
      await db.exec("CREATE TABLE t (x integer)")
      await durability.flush()
      const before = durability.flushes
      await db.query("INSERT INTO t VALUES (1)")
      await db.query("INSERT INTO t VALUES (2)")
      await Promise.all([durability.flush(), durability.flush(), durability.flush()])
      assert.strictEqual(durability.flushes, before + 1)
    } finally {
      await db.close()
    }
  }, 120_000)

  it("keeps what was committed across a close and reopen", async () => {
    const dataDir = await freshPgliteDir("reopen")
    const first = await openDurable(dataDir)
    await first.db.exec("CREATE TABLE t (x integer)")
    await first.db.query("INSERT INTO t VALUES (42)")
    await first.durability.flush()
    await first.db.close()
    const second = await openDurable(dataDir)
    try {
      const rows = await second.db.query<{ x: number }>("SELECT x FROM t")
      assert.deepStrictEqual(rows.rows, [{ x: 42 }])
    } finally {
      await second.db.close()
    }
  }, 120_000)
})
