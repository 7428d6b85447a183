import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Tracer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { migrate } from "../../src/store/database/Migrations.ts"
import * as SqliteClient from "../../src/store/sqlite/SqliteClient.ts"
import * as StoreUpkeep from "../../src/store/sqlite/StoreUpkeep.ts"
import { declaredRootsOnly } from "../../src/observability/Tracing.ts"
import { tempDir } from "../support/TestServer.ts"

class StoreFile extends Context.Service<StoreFile, string>()("test/StoreFile") {}

/** A migrated SQLite store in a file of its own, removed with the scope. */
const fileStore = Layer.unwrap(Effect.gen(function*() {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => tempDir("upkeep")),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )
  const file = NodePath.join(dir, "switchyard.db")
  return Layer.effectDiscard(migrate).pipe(
    Layer.provideMerge(SqliteClient.layer(file)),
    Layer.provideMerge(Layer.succeed(StoreFile, file))
  )
}))


const pragma = (name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<Record<string, unknown>>(`PRAGMA ${name}`)
    return Object.values(rows[0] ?? {})[0]
  })

/** `n` ledger rows of one key, `padding` bytes of model name each (to make pages). */
const insertLedger = (from: number, n: number, padding = 200) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT OR IGNORE INTO workspaces (id, slug, name) VALUES ('w', 'w', 'W')`
    yield* sql`INSERT OR IGNORE INTO users (id, name, default_workspace_id) VALUES ('u', 'U', 'w')`
    yield* sql`INSERT OR IGNORE INTO api_keys (id, hash, kind, name, label, user_id, workspace_id)
      VALUES ('k', 'h', 'standard', 'n', 'l', 'u', 'w')`
    yield* sql`WITH RECURSIVE g(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM g WHERE i < ${from + n - 1})
      INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos, is_byok, created_at)
      SELECT 'gen-' || i, 'k', 'w', 'm-' || hex(randomblob(${padding / 2})), 'p', 1, 1, 10, 0, 1700000000000 + i FROM g`
  })

const fileBytes = (file: string) => Fs.statSync(file).size
const walBytes = (file: string) => (Fs.existsSync(`${file}-wal`) ? Fs.statSync(`${file}-wal`).size : 0)

describe("store upkeep (SQLite)", () => {
  it.effect("the store opens in WAL with synchronous FULL, incremental auto-vacuum and a bounded log", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* pragma("journal_mode"), "wal")
      assert.strictEqual(yield* pragma("synchronous"), 2)
      assert.strictEqual(yield* pragma("auto_vacuum"), 2)
      assert.strictEqual(yield* pragma("journal_size_limit"), StoreUpkeep.walLimitBytes)
    }).pipe(Effect.provide(fileStore)))

  it.effect("statistics are gathered at start and kept as the ledger grows", () =>
    Effect.scoped(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* insertLedger(1, 5_000, 10)
      yield* StoreUpkeep.start
      const stats = yield* sql<{ tbl: string; stat: string }>`SELECT tbl, stat FROM sqlite_stat1 WHERE tbl = 'ledger'`
      assert.isAbove(stats.length, 0)
      const rowsAt = (s: ReadonlyArray<{ stat: string }>) => Number(s[0]!.stat.split(" ")[0])
      assert.strictEqual(rowsAt(stats), 5_000)
      // Twenty times the rows: the next look's optimize gathers them again.
      yield* insertLedger(5_001, 95_000, 10)
      yield* TestClock.adjust(StoreUpkeep.every)
      const again = yield* sql<{ stat: string }>`SELECT stat FROM sqlite_stat1 WHERE tbl = 'ledger'`
      assert.isAbove(rowsAt(again), 5_000)
    })).pipe(Effect.provide(fileStore)), 120_000)

  it.effect("retention's deletes give their space back in small steps, and the log stays within its bound", () =>
    Effect.scoped(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const file = yield* StoreFile
      // About 40 MB of ledger in transactions of 10,000 rows: the log passes its bound on the way.
      for (let i = 0; i < 10; i++) yield* insertLedger(1 + i * 10_000, 10_000, 2_000)
      const full = fileBytes(file)
      assert.isAbove(full, 20_000_000)
      yield* sql`DELETE FROM ledger WHERE created_at <= ${1700000000000 + 90_000}`
      const free = yield* StoreUpkeep.freePages(sql)
      assert.isAbove(free, 1_000)

      yield* StoreUpkeep.start
      // The look checkpoints the log: what SQLite's own checkpoints left beyond the limit is truncated away.
      yield* TestClock.adjust(StoreUpkeep.every)
      assert.isAtMost(walBytes(file), StoreUpkeep.walLimitBytes)
      // One step a second while pages are free; each gives back at most `vacuumPages`.
      const steps = Math.ceil(free / StoreUpkeep.vacuumPages) + 1
      for (let i = 0; i < steps; i++) yield* TestClock.adjust(StoreUpkeep.stepEvery)
      assert.strictEqual(yield* StoreUpkeep.freePages(sql), 0)
      yield* sql.unsafe("PRAGMA wal_checkpoint(TRUNCATE)")
      assert.isBelow(fileBytes(file), full / 5)
      // What is left reads as before.
      const left = yield* sql<{ n: number }>`SELECT count(*) AS n FROM ledger`
      assert.strictEqual(left[0]!.n, 10_000)
      assert.deepStrictEqual(yield* sql`PRAGMA integrity_check`, [{ integrity_check: "ok" }])
    })).pipe(Effect.provide(fileStore)), 180_000)

  it.effect("an idle store's looks and steps export no trace root; a look after writes exports one", () =>
    Effect.scoped(Effect.gen(function*() {
      // The exported roots, as the gateway's tracer filters them.
      const roots: Array<string> = []
      const recording = declaredRootsOnly(Tracer.make({
        span: (options) => {
          if (options.sampled && Option.isNone(options.parent)) roots.push(options.name)
          return Tracer.nativeTracer.span(options)
        }
      }))
      yield* Effect.gen(function*() {
        yield* insertLedger(1, 100, 10)
        yield* StoreUpkeep.start
        // Ten idle minutes and their steps: nothing to trace.
        for (let i = 0; i < 10; i++) yield* TestClock.adjust(StoreUpkeep.every)
        assert.deepStrictEqual(roots, [])
        // Writes move the log: the next look is a root, the idle ones after it are not.
        yield* insertLedger(101, 100, 10)
        yield* TestClock.adjust(StoreUpkeep.every)
        assert.deepStrictEqual(roots, ["store.upkeep"])
        for (let i = 0; i < 5; i++) yield* TestClock.adjust(StoreUpkeep.every)
        assert.deepStrictEqual(roots, ["store.upkeep"])
      }).pipe(Effect.provideService(Tracer.Tracer, recording))
    })).pipe(Effect.provide(fileStore)), 120_000)

  it.effect("the longest step of giving space back is short", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < 5; i++) yield* insertLedger(1 + i * 10_000, 10_000, 2_000)
      yield* sql`DELETE FROM ledger`
      const steps = yield* StoreUpkeep.vacuumAll(sql)
      assert.isAbove(steps.length, 10)
      const longest = Math.max(...steps.map((s) => s.millis))
      console.log(`incremental vacuum: ${steps.length} steps of ${StoreUpkeep.vacuumPages} pages, longest ${longest.toFixed(1)} ms`)
      // A step is a few milliseconds; the bound leaves room for a loaded shared machine.
      assert.isBelow(longest, 1_000)
      assert.strictEqual(yield* StoreUpkeep.freePages(sql), 0)
    }).pipe(Effect.provide(fileStore)), 180_000)
})
