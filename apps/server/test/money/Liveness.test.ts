import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Scope } from "effect"
import { TestClock } from "effect/testing"
import { SqlClient } from "effect/sql"
import * as GatewayProcesses from "../../src/store/GatewayProcesses.ts"
import * as MoneyStore from "../../src/store/MoneyStore.ts"
import { seedKey, sqlLayer } from "../support/MoneyStore.ts"

/** A hold owned by `owner`, as a grant leaves it (its expiry is far off: only liveness may take it). */
const holdOf = (key: { keyId: string; workspaceId: string }, owner: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = `hold-${owner}`
    yield* sql`INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner, fence)
      VALUES (${id}, ${key.keyId}, ${key.workspaceId}, 10, ${false}, ${new Date(0)}, ${new Date(8.64e15)}, ${owner}, 1)`
    return id
  }).pipe(Effect.orDie)

const holdIds = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return (yield* sql<{ id: string }>`SELECT id FROM holds`.pipe(Effect.orDie)).map((r) => r.id).sort()
})

// Worker processes on one SQLite file date their liveness by their own clock; PostgreSQL's replicas
// by the database's `now()`, which the test clock does not move.
describe("liveness on the test clock (sqlite)", () => {
  it.effect("two processes that only heartbeat keep their holds past the stale time, indefinitely", () =>
    Effect.gen(function*() {
      const store = yield* MoneyStore.make
      const key = yield* seedKey()
      const options = { heartbeat: Duration.seconds(10), staleAfter: Duration.seconds(30), sole: false }
      const scopeA = yield* Scope.make()
      const scopeB = yield* Scope.make()
      const a = yield* GatewayProcesses.register(store, options).pipe(Scope.provide(scopeA))
      const b = yield* GatewayProcesses.register(store, options).pipe(Scope.provide(scopeB))
      const held = [yield* holdOf(key, a), yield* holdOf(key, b)].sort()
      // Ten minutes of heartbeats and sweeps, a second at a time: neither ever sees the other stale.
      for (let second = 1; second <= 600; second++) {
        yield* TestClock.adjust(Duration.seconds(1))
        if (second % 10 === 0) assert.deepStrictEqual(yield* holdIds, held, `after ${second} s`)
      }
      assert.strictEqual(yield* store.processes.live(Duration.seconds(30)), 2)
      // A process that stops heartbeating is judged dead once unseen for the stale time, and its holds go.
      yield* Scope.close(scopeB, Exit.void)
      yield* holdOf(key, b)
      yield* TestClock.adjust(Duration.seconds(45))
      assert.deepStrictEqual(yield* holdIds, [`hold-${a}`])
      yield* Scope.close(scopeA, Exit.void)
    }).pipe(Effect.provide(sqlLayer("sqlite"))))
})
