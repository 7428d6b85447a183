import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BatchStore, type Claimer } from "../../src/store/batches/BatchStore.ts"
import { newBatch, store } from "../support/BatchStores.ts"

// Claims of two gateway processes on one store, by the liveness of `gateway_processes`: what one
// holds, the other takes only once the first is judged dead (unseen for 30 s).

const staleAfter = Duration.seconds(30)
const t0 = 1_000_000_000_000

/** The process's heartbeat at `now` (what `GatewayProcesses` writes every ten seconds). */
const seen = (id: string, now: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO gateway_processes (id, started_at, seen_at) VALUES (${id}, ${now}, ${now})
      ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`)

const as = (owner: string, now: number): Claimer => ({ owner, now, staleAfter })

describe("batch claims between gateway processes", () => {
  it.effect("one validator per batch: another process validates it only once the first is judged dead", () =>
    Effect.gen(function*() {
      const batches = yield* BatchStore
      yield* newBatch("batch_v")
      yield* seen("p1", t0)
      yield* seen("p2", t0)
      assert.isTrue(yield* batches.claimValidation("batch_v", as("p1", t0)))
      assert.isFalse(yield* batches.claimValidation("batch_v", as("p2", t0)), "p1 is alive")
      assert.isFalse(yield* batches.claimValidation("batch_v", as("p1", t0)), "a process claims once")
      // p2 keeps being seen, p1 not: 30 s later p1 is still alive, after that it is dead.
      yield* seen("p2", t0 + 30_000)
      assert.isFalse(yield* batches.claimValidation("batch_v", as("p2", t0 + 30_000)))
      yield* seen("p2", t0 + 30_001)
      assert.isTrue(yield* batches.claimValidation("batch_v", as("p2", t0 + 30_001)))
      // A validation let go (a store error) is claimable at once.
      yield* batches.releaseValidation("batch_v", "p2")
      yield* seen("p1", t0 + 30_001)
      assert.isTrue(yield* batches.claimValidation("batch_v", as("p1", t0 + 30_001)))
    }).pipe(Effect.provide(store)))

  it.effect("a unit is claimed once; a dead process's unit is taken once it is judged dead, and its late write is refused", () =>
    Effect.gen(function*() {
      const batches = yield* BatchStore
      yield* newBatch("batch_u")
      yield* batches.start("batch_u", [0, 1].map((seq) => ({ seq, inputSeq: 0, lineOffset: seq, firstLine: seq + 1, lineCount: 1 })), 2, t0)
      yield* seen("p1", t0)
      yield* seen("p2", t0)
      const first = Option.getOrThrow(yield* batches.claim(as("p1", t0)))
      const second = Option.getOrThrow(yield* batches.claim(as("p2", t0)))
      assert.deepStrictEqual([first.seq, second.seq], [0, 1], "different units")
      assert.isTrue(Option.isNone(yield* batches.claim(as("p2", t0 + 1_000))), "p1's unit is p1's while it is alive")
      assert.isTrue(Option.isNone(yield* batches.claim(as("p1", t0 + 1_000))), "nor does a process claim its own again")
      yield* seen("p2", t0 + 31_000)
      const taken = Option.getOrThrow(yield* batches.claim(as("p2", t0 + 31_000)))
      assert.strictEqual(taken.seq, 0, "p1 judged dead: its unit is p2's")
      assert.isFalse(yield* batches.claimed(first, "p1"))
      assert.isTrue(yield* batches.claimed(taken, "p2"))
      const result = { output: [{ line: "x" }], errors: [], completed: 1, failed: 0, costNanos: 5n }
      const p1 = yield* batches.completeAndClaim(first, "p1", result, as("p1", t0 + 31_000))
      assert.isFalse(p1.written, "p1 came back: its write is refused")
      assert.isTrue((yield* batches.completeAndClaim(taken, "p2", result, as("p2", t0 + 31_000))).written)
      const done = Option.getOrThrow(yield* batches.batchById("batch_u"))
      assert.strictEqual(done.completed, 1)
      assert.strictEqual(BigInt(done.cost_nanos), 5n)
    }).pipe(Effect.provide(store)))

  it.effect("the embedded store's only process (no heartbeat row) takes a unit claimed before its start, never its own", () =>
    Effect.gen(function*() {
      const batches = yield* BatchStore
      yield* newBatch("batch_s")
      yield* batches.start("batch_s", [{ seq: 0, inputSeq: 0, lineOffset: 0, firstLine: 1, lineCount: 1 }], 1, t0)
      assert.isTrue(Option.isSome(yield* batches.claim(as("before-restart", t0))))
      assert.isTrue(Option.isNone(yield* batches.claim(as("before-restart", t0))))
      const again = yield* batches.claim(as("after-restart", t0 + 1))
      assert.strictEqual(Option.getOrThrow(again).seq, 0, "taken at once: its claimer has no row")
    }).pipe(Effect.provide(store)))
})
