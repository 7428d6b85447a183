import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Accounting } from "@switchyard/core/store/Accounting"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Effect, Layer, Redacted } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as AccountingLive from "../../src/store/money/AccountingLive.ts"
import * as ApiKeyStoreLive from "../../src/store/keys/ApiKeyStoreLive.ts"
import * as Database from "../../src/store/database/Database.ts"
import { migrate } from "../../src/store/database/Migrations.ts"
import * as SqliteClient from "../../src/store/sqlite/SqliteClient.ts"
import { ledgerSums, seedKey } from "../support/MoneyStore.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

const loop = NodePath.join(import.meta.dirname, "fixtures", "ReserveLoop.ts")

const runLoop = (env: Record<string, string>) =>
  new Promise<Record<string, number>>((resolve, reject) => {
    ChildProcess.execFile(process.execPath, [loop], { env: { ...process.env, ...env }, timeout: 90_000 }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`${error.message}\n${stderr}`))
      resolve(JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, number>)
    })
  })

/** A store two processes share: a fresh PostgreSQL database, or one SQLite file (two worker processes). */
interface Shared {
  /** The environment that points a process at it. */
  readonly env: Record<string, string>
  readonly client: Layer.Layer<import("effect/sql").SqlClient.SqlClient, unknown>
  readonly close: () => Promise<void>
}

const shared = async (kind: "postgres" | "sqlite"): Promise<Shared> => {
  if (kind === "postgres") {
    const url = await freshDatabase()
    return {
      env: { DATABASE_URL: url },
      client: PgClient.layer({ url: Redacted.make(url), maxConnections: 4 }) as Shared["client"],
      close: async () => {
        await dropDatabase(url)
      }
    }
  }
  const dir = tempDir("workers")
  const file = NodePath.join(dir, "switchyard.db")
  return {
    // Several workers: no process owns the store alone, each finds the others' deaths by heartbeats.
    env: { SQLITE_FILE: file, SWITCHYARD_WORKERS: "2" },
    client: SqliteClient.layer(file) as Shared["client"],
    close: async () => Fs.rmSync(dir, { recursive: true, force: true })
  }
}

const kinds = storeKind === "postgres" ? (["postgres", "sqlite"] as const) : (["sqlite"] as const)

describe.each(kinds)("accounting across two processes on one store (%s)", (kind) => {
  it("200 concurrent requests from two processes on a key that can afford 50: exactly 50 succeed", async () => {
    const store = await shared(kind)
    try {
      const layer = Layer.mergeAll(AccountingLive.layerWith({ process: { sole: false } }), ApiKeyStoreLive.layer).pipe(
        Layer.provideMerge(Database.support(Layer.effectDiscard(migrate).pipe(Layer.provideMerge(store.client))))
      )
      const cost = 1_234_567n
      const key = await Effect.runPromise(Effect.gen(function*() {
        const key = yield* seedKey({ limitNanos: 50n * cost, limitReset: "monthly" })
        yield* (yield* Accounting).addCredits({ workspaceId: key.workspaceId, amountNanos: 1000n * cost, note: null, grantedByKeyId: null })
        return key
      }).pipe(Effect.provide(layer)))
      const env = {
        ...store.env,
        LOOP_KEY_ID: key.keyId,
        LOOP_WORKSPACE_ID: key.workspaceId,
        LOOP_COST_NANOS: cost.toString(),
        LOOP_ATTEMPTS: "100",
        LOOP_START_AT: String(Date.now() + 4000)
      }
      const [a, b] = await Promise.all([runLoop(env), runLoop(env)])
      assert.strictEqual((a.ok ?? 0) + (b.ok ?? 0), 50, JSON.stringify({ a, b }))
      assert.strictEqual((a.key_limit ?? 0) + (b.key_limit ?? 0), 150, JSON.stringify({ a, b }))
      // Both took part: each had every one of its 100 attempts answered, granted or refused (which
      // of them wins the 50 depends on which starts first on a busy machine).
      assert.strictEqual((a.ok ?? 0) + (a.key_limit ?? 0), 100, JSON.stringify(a))
      assert.strictEqual((b.ok ?? 0) + (b.key_limit ?? 0), 100, JSON.stringify(b))
      const after = await Effect.runPromise(Effect.gen(function*() {
        const sums = yield* ledgerSums(key.keyId)
        const credits = yield* (yield* Accounting).credits(key.workspaceId)
        const listed = yield* (yield* ApiKeyStore).list({
          userId: key.userId, workspaceId: key.workspaceId, includeDisabled: true, offset: 0, limit: 10, now: new Date()
        })
        return { sums, record: listed[0], credits }
      }).pipe(Effect.provide(layer)))
      assert.strictEqual(after.sums.total, 50n * cost)
      assert.strictEqual(after.sums.rows, 50)
      assert.strictEqual(after.record!.usage, Number(after.sums.total) / 1e9)
      assert.strictEqual(after.record!.limit_remaining, 0)
      assert.strictEqual(after.credits.totalUsageNanos, after.sums.total)
    } finally {
      await store.close()
    }
  }, 120_000)
})
