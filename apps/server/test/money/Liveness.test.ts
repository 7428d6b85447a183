import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as GatewayProcesses from "../../src/store/money/GatewayProcesses.ts"
import * as MoneyStore from "../../src/store/money/MoneyStore.ts"
import { seedKey, sqlLayer } from "../support/MoneyStore.ts"

/** A hold owned by `owner`, living far beyond the test (only a sweep can take it). */
const holdOf = (key: { keyId: string; workspaceId: string }, owner: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = `hold-${owner}`
    yield* sql`INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner, fence)
      VALUES (${id}, ${key.keyId}, ${key.workspaceId}, 10, ${false}, 0, ${86_400_000}, ${owner}, 1)`
    return id
  }).pipe(Effect.orDie)

// On SQLite the store's clock is the gateway's (worker processes sharing one file); PostgreSQL
// reads `now()` in SQL, where the test clock cannot reach.
describe("liveness on the test clock (sqlite)", () => {
  it.effect("two processes that only heartbeat keep their holds past the stale time, indefinitely", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* MoneyStore.make
      const key = yield* seedKey()
      const scope = yield* Scope.make()
      const first = yield* GatewayProcesses.register(store, { sole: false }).pipe(Scope.provide(scope))
      const second = yield* GatewayProcesses.register(store, { sole: false }).pipe(Scope.provide(scope))
      const holds = [yield* holdOf(key, first), yield* holdOf(key, second)].sort()
      // Ten minutes in heartbeat steps: twenty stale times, and no lease granted meanwhile.
      for (let step = 1; step <= 60; step++) {
        yield* TestClock.adjust("10 seconds")
        const left = yield* sql<{ id: string }>`SELECT id FROM holds ORDER BY id`.pipe(Effect.orDie)
        assert.deepStrictEqual(left.map((h) => h.id), holds, `after ${step * 10} s both processes still hold`)
      }
      const seen = yield* sql<{ seen: unknown }>`SELECT seen_at AS seen FROM gateway_processes`.pipe(Effect.orDie)
      assert.deepStrictEqual(seen.map((p) => Number(p.seen)), [600_000, 600_000], "each heartbeat wrote the time it ran")
      assert.strictEqual(yield* store.processes.live(GatewayProcesses.defaultStaleAfter).pipe(Effect.orDie), 2)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(sqlLayer("sqlite"))))
})
