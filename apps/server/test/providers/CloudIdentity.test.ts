import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import * as CloudIdentity from "../../src/providers/CloudIdentity.ts"

const hour = 3_600_000

// A token source over a counting fetch whose tokens live an hour from the test clock's now.
const counted = () => {
  let fetches = 0
  let now = 0
  const source = new CloudIdentity.TokenSource(() => {
    fetches++
    return Promise.resolve({ value: `token-${fetches}`, expiresAt: now + hour })
  })
  const token = Effect.gen(function*() {
    now = yield* Clock.currentTimeMillis
    return yield* Effect.promise(() => source.token(now))
  })
  return { token, fetches: () => fetches }
}

describe("CloudIdentity.TokenSource", () => {
  it.effect("keeps a token until five minutes before it expires, then fetches the next", () =>
    Effect.gen(function*() {
      const { token, fetches } = counted()
      assert.strictEqual(yield* token, "token-1")
      yield* TestClock.adjust(54 * 60_000)
      assert.strictEqual(yield* token, "token-1")
      assert.strictEqual(fetches(), 1)
      yield* TestClock.adjust(2 * 60_000)
      assert.strictEqual(yield* token, "token-2")
      assert.strictEqual(yield* token, "token-2")
      assert.strictEqual(fetches(), 2)
    }))

  it.effect("concurrent calls share one fetch", () =>
    Effect.gen(function*() {
      const { token, fetches } = counted()
      const tokens = yield* Effect.all(Array.from({ length: 16 }, () => token), { concurrency: "unbounded" })
      assert.deepStrictEqual(new Set(tokens), new Set(["token-1"]))
      assert.strictEqual(fetches(), 1)
    }))
})
