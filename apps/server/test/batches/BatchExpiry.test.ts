import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { BatchStore } from "../../src/store/batches/BatchStore.ts"
import { newBatch, store, window } from "../support/BatchStores.ts"

const batch = (id: string) => Effect.flatMap(BatchStore, (s) => s.batchById(id)).pipe(Effect.map(Option.getOrThrow))

describe("batches: the 24 h completion window", () => {
  it.effect("a batch not finished when its window passes is expired: one validating at once, one running once its units are written", () =>
    Effect.gen(function*() {
      const batches = yield* BatchStore
      yield* newBatch("batch_waiting")
      yield* newBatch("batch_running")
      const started = yield* Clock.currentTimeMillis
      yield* batches.start("batch_running", [{ seq: 0, inputSeq: 0, lineOffset: 0, firstLine: 1, lineCount: 2 }], 2, started)
      const unit = Option.getOrThrow(yield* batches.claim({ owner: "runner", now: started, staleAfter: Duration.seconds(30) }))

      yield* TestClock.adjust(Duration.millis(window - 1))
      yield* batches.expireOverdue(yield* Clock.currentTimeMillis)
      assert.strictEqual((yield* batch("batch_waiting")).status, "validating", "not a millisecond early")
      assert.isNull((yield* batch("batch_running")).expired_at)

      yield* TestClock.adjust(Duration.millis(1))
      const now = yield* Clock.currentTimeMillis
      yield* batches.expireOverdue(now)
      const waiting = yield* batch("batch_waiting")
      assert.strictEqual(waiting.status, "expired")
      assert.strictEqual(Number(waiting.expired_at), now)
      assert.strictEqual(waiting.output_file_id, "", "no output file for a batch that never ran")
      const running = yield* batch("batch_running")
      assert.strictEqual(running.status, "in_progress", "its running unit finishes first")
      assert.strictEqual(Number(running.expired_at), now)

      yield* batches.finalize({ owner: "runner", now, staleAfter: Duration.seconds(30) })
      assert.strictEqual((yield* batch("batch_running")).status, "in_progress")
      const { written } = yield* batches.completeAndClaim(unit, "runner", {
        output: [{ line: "{\"custom_id\":\"a\"}" }],
        errors: [{ line: "{\"custom_id\":\"b\",\"error\":{\"code\":\"batch_expired\"}}" }],
        completed: 1,
        costNanos: 0n,
        failed: 1
      }, { owner: "runner", now, staleAfter: Duration.seconds(30) })
      assert.isTrue(written)
      yield* batches.finalize({ owner: "runner", now: yield* Clock.currentTimeMillis, staleAfter: Duration.seconds(30) })
      const done = yield* batch("batch_running")
      assert.strictEqual(done.status, "expired")
      assert.isNull(done.completed_at)
      assert.deepStrictEqual([done.completed, done.failed], [1, 1])
    }).pipe(Effect.provide(store)))
})
