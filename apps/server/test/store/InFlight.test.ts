import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { InFlight } from "../../src/store/money/InFlight.ts"

describe("InFlight", () => {
  it.effect("counts a run of several requests (a batch's coalesced lines) as that many until it ends, failed or not", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight
      const during = yield* inFlight.track(Effect.sync(() => inFlight.count()), 256)
      assert.strictEqual(during, 256)
      const nested = yield* inFlight.track(inFlight.track(Effect.sync(() => inFlight.count())), 3)
      assert.strictEqual(nested, 4, "one request inside a run of three")
      yield* Effect.flip(inFlight.track(Effect.fail("refused"), 5))
      assert.strictEqual(inFlight.count(), 0)
    }).pipe(Effect.provide(InFlight.layer)))
})
