import { assert, describe, it } from "@effect/vitest"
import { Accounting } from "@switchyard/core/store/Accounting"
import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as AccountingLive from "../../src/store/money/AccountingLive.ts"
import { dialect, moneyStores, seedKey, sqlLayer } from "../support/MoneyStore.ts"

/** A hold as another process left it: owned by `owner`, expiring in ten minutes. */
const foreignHold = (key: { keyId: string; workspaceId: string }, owner: string | null) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = `hold-${Crypto.randomUUID()}`
    yield* sql`INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner, fence)
      VALUES (${id}, ${key.keyId}, ${key.workspaceId}, 10, ${false}, ${new Date()}, ${new Date(Date.now() + 600_000)}, ${owner}, 1000000)`
    return id
  }).pipe(Effect.orDie)

const process = (sql: SqlClient.SqlClient, id: string, secondsAgo: number) =>
  sql`INSERT INTO gateway_processes (id, started_at, seen_at)
    VALUES (${id}, ${new Date(Date.now() - 3_600_000)}, ${new Date(Date.now() - secondsAgo * 1000)})`.pipe(Effect.orDie)

const holdIds = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ id: string }>`SELECT id FROM holds ORDER BY id`.pipe(Effect.orDie)
  return rows.map((r) => r.id).sort()
})

/** Builds `AccountingLive.layer` (as a gateway process starts) in a scope the test closes. */
const startProcess = Effect.gen(function*() {
  const scope = yield* Scope.make()
  const context = yield* Layer.buildWithScope(AccountingLive.layer, scope)
  return { scope, accounting: context.mapUnsafe.get(Accounting.key) as Accounting["Service"] }
})

describe.each(moneyStores)("holds of a dead gateway process (%s)", (kind) => {
  it.live("holds whose owner was not seen for 30 s are released at start, a live process's are kept, and a clean stop releases its own", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const key = yield* seedKey()
      const dead = Crypto.randomUUID()
      const live = Crypto.randomUUID()
      yield* foreignHold(key, dead)
      const liveHold = yield* foreignHold(key, live)
      const unownedHold = yield* foreignHold(key, null)
      // Replicas may share PostgreSQL; the embedded SQLite store with one worker is this process's alone.
      const shared = (yield* dialect) === "pg"
      if (shared) {
        yield* process(sql, dead, 45)
        yield* process(sql, live, 2)
      }

      const started = yield* startProcess
      const processes = yield* sql<{ id: string }>`SELECT id FROM gateway_processes`.pipe(Effect.orDie)
      if (shared) {
        // Another process shares the store: only the stale owner's hold goes, with its row.
        assert.deepStrictEqual(yield* holdIds, [liveHold, unownedHold].sort())
        assert.notInclude(processes.map((p) => p.id), dead)
        assert.include(processes.map((p) => p.id), live)
        assert.strictEqual(processes.length, 2, "the starting process registered itself")
      } else {
        // The store belongs to one process: every hold found at start was left by one that is gone.
        assert.deepStrictEqual(yield* holdIds, [])
      }

      yield* started.accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1000n, note: null, grantedByKeyId: null })
      const own = yield* started.accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 5n, byok: false })
      // The request was admitted from the process's lease on the key: one hold the process owns.
      const owners = yield* sql<{ owner: string | null }>`SELECT owner FROM holds WHERE id = ${own.lease}`.pipe(Effect.orDie)
      assert.isString(owners[0]!.owner)
      if (shared) assert.include(processes.map((p) => p.id), owners[0]!.owner)

      yield* Scope.close(started.scope, Exit.void)
      assert.notInclude(yield* holdIds, own.lease, "a clean stop releases the process's own holds")
      const after = yield* sql<{ id: string }>`SELECT id FROM gateway_processes`.pipe(Effect.orDie)
      assert.notInclude(after.map((p) => p.id), owners[0]!.owner, "and removes its row")
      if (shared) assert.deepStrictEqual(yield* holdIds, [liveHold, unownedHold].sort())
    }).pipe(Effect.provide(sqlLayer(kind))), 60_000)

  // On SQLite: as worker processes sharing one file (`SWITCHYARD_WORKERS`) find each other's deaths.
  it.live("a live process's heartbeat sweeps the holds of a process that stopped heartbeating", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const key = yield* seedKey()
      const gone = Crypto.randomUUID()
      yield* process(sql, gone, 0)
      const orphan = yield* foreignHold(key, gone)
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        AccountingLive.layerWith({ process: { heartbeat: "100 millis", staleAfter: "1 second", sole: false } }),
        scope
      )
      const accounting = context.mapUnsafe.get(Accounting.key) as Accounting["Service"]
      yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1000n, note: null, grantedByKeyId: null })
      const own = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 5n, byok: false })
      // The request was admitted from the process's lease on the key: one hold the process owns.
      assert.deepStrictEqual(yield* holdIds, [orphan, own.lease!].sort(), "a process seen just now is alive")
      const deadline = Date.now() + 5_000
      while ((yield* holdIds).includes(orphan) && Date.now() < deadline) yield* Effect.sleep("50 millis")
      assert.deepStrictEqual(yield* holdIds, [own.lease!], "once unseen for the stale time, its holds go")
      const processes = yield* sql<{ id: string }>`SELECT id FROM gateway_processes`.pipe(Effect.orDie)
      assert.notInclude(processes.map((p) => p.id), gone)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(sqlLayer(kind))), 60_000)
})
