import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import * as FencedLease from "../../src/accounting/FencedLease.ts"
import * as SpendLease from "../../src/accounting/SpendLease.ts"

const term: FencedLease.Term = { sweepAfterMs: 30_000, ttlMs: 600_000, marginMs: 5_000, renewAheadMs: 10_000 }

/** A lease granted `amount` under token `fence` by a statement asked now. */
const grantNow = (held: FencedLease.Held, amount: bigint, fence: string | null) =>
  Effect.map(Clock.monotonicTimeNanos, (askedAt) => FencedLease.granted(held, { amount, fence }, askedAt, term))

const admitNow = (held: FencedLease.Held, worst: bigint) => Effect.map(Clock.monotonicTimeNanos, (now) => FencedLease.admit(held, worst, now))

describe("FencedLease: validity by the holder's monotonic clock", () => {
  it.effect("a lease is valid from before its grant was asked until the margin before the store may sweep it, and not after", () =>
    Effect.gen(function*() {
      const askedAt = yield* Clock.monotonicTimeNanos
      // The statement takes 2 s to answer: validity is still counted from before it was asked.
      yield* TestClock.adjust("2 seconds")
      const held = FencedLease.granted(FencedLease.empty, { amount: 100n, fence: "7" }, askedAt, term)
      assert.isDefined(yield* admitNow(held, 10n))
      yield* TestClock.adjust("22999 millis")
      assert.isDefined(yield* admitNow(held, 10n), "24.999 s after the ask: still valid")
      yield* TestClock.adjust("1 millis")
      assert.isUndefined(yield* admitNow(held, 10n), "25 s after the ask (30 s sweep less 5 s margin): no admission")
    }))

  it.effect("a process frozen past the sweep bound admits nothing until it is granted again", () =>
    Effect.gen(function*() {
      let held = yield* grantNow(FencedLease.empty, 100n, "7")
      held = (yield* admitNow(held, 10n))!
      // SIGSTOP for 45 s: the monotonic clock runs on while the process does not.
      yield* TestClock.adjust("45 seconds")
      assert.isFalse(FencedLease.isValid(held, yield* Clock.monotonicTimeNanos))
      assert.isUndefined(yield* admitNow(held, 1n), "plenty free, but the lease may have been swept")
      // The renewal finds the row under the same token: it was not swept, and the lease counts again.
      const renewed = yield* grantNow(held, 0n, "7")
      assert.deepStrictEqual(renewed.lease, held.lease)
      assert.isDefined(yield* admitNow(renewed, 10n))
    }))

  it.effect("renewal falls due a renew-ahead before the validity ends", () =>
    Effect.gen(function*() {
      const held = yield* grantNow(FencedLease.empty, 100n, "7")
      yield* TestClock.adjust("15 seconds")
      assert.isFalse(FencedLease.renewDue(held, yield* Clock.monotonicTimeNanos, term))
      yield* TestClock.adjust("1 millis")
      assert.isTrue(FencedLease.renewDue(held, yield* Clock.monotonicTimeNanos, term))
      assert.isFalse(FencedLease.renewDue(FencedLease.empty, yield* Clock.monotonicTimeNanos, term), "nothing held, nothing to renew")
    }))

  it.effect("a short stale time keeps at least half of it valid, and renews in its last third", () =>
    Effect.gen(function*() {
      const short: FencedLease.Term = { ...term, sweepAfterMs: 1_000 }
      const askedAt = yield* Clock.monotonicTimeNanos
      const held = FencedLease.granted(FencedLease.empty, { amount: 5n, fence: "1" }, askedAt, short)
      assert.strictEqual(held.validUntilNanos - askedAt, 500_000_000n)
      yield* TestClock.adjust("166 millis")
      assert.isFalse(FencedLease.renewDue(held, yield* Clock.monotonicTimeNanos, short))
      yield* TestClock.adjust("2 millis")
      assert.isTrue(FencedLease.renewDue(held, yield* Clock.monotonicTimeNanos, short))
    }))

  it.effect("the lease's own expiry bounds validity when it is shorter than the sweep", () =>
    Effect.gen(function*() {
      const askedAt = yield* Clock.monotonicTimeNanos
      const held = FencedLease.granted(FencedLease.empty, { amount: 5n, fence: "1" }, askedAt, { ...term, ttlMs: 20_000 })
      assert.strictEqual(held.validUntilNanos - askedAt, 15_000_000_000n)
    }))
})

describe("FencedLease: fencing tokens", () => {
  it.effect("a grant under another token means the lease was taken: what was reserved and pending under the old one is gone", () =>
    Effect.gen(function*() {
      let held = yield* grantNow(FencedLease.empty, 100n, "7")
      held = (yield* admitNow(held, 30n))!
      held = { ...held, lease: SpendLease.settle(held.lease, 30n, 20n).lease }
      assert.deepStrictEqual(held.lease, { amount: 100n, reserved: 0n, pending: 20n })
      yield* TestClock.adjust("40 seconds")
      const again = yield* grantNow(held, 16n, "9")
      assert.deepStrictEqual(again.lease, { amount: 16n, reserved: 0n, pending: 0n })
      assert.strictEqual(again.fence, "9")
      assert.isDefined(yield* admitNow(again, 16n))
      assert.isUndefined(yield* admitNow(again, 17n), "only the new grant is held")
    }))

  it.effect("a grant that finds no row for a lease that had one means the lease was taken", () =>
    Effect.gen(function*() {
      const held = yield* grantNow(FencedLease.empty, 100n, "7")
      const gone = yield* grantNow(held, 0n, null)
      assert.deepStrictEqual(gone, FencedLease.empty)
      assert.isUndefined(yield* admitNow(gone, 1n))
      // A lease that never had a row and was granted nothing still has none.
      assert.deepStrictEqual(yield* grantNow(FencedLease.empty, 0n, null), FencedLease.empty)
    }))

  it.effect("a re-read under the same token takes the store's amount and keeps what is reserved, pending and valid", () =>
    Effect.gen(function*() {
      let held = yield* grantNow(FencedLease.empty, 100n, "7")
      held = (yield* admitNow(held, 30n))!
      const read = FencedLease.reread(held, { amount: 80n, fence: "7" })
      assert.deepStrictEqual(read.lease, { amount: 80n, reserved: 30n, pending: 0n })
      assert.strictEqual(read.validUntilNanos, held.validUntilNanos)
    }))

  it.effect("a re-read that finds the row gone, or under another token, ends the old lease; one found for a lease without a row is adopted, not yet valid", () =>
    Effect.gen(function*() {
      let held = yield* grantNow(FencedLease.empty, 100n, "7")
      held = (yield* admitNow(held, 30n))!
      assert.deepStrictEqual(FencedLease.reread(held, undefined), FencedLease.empty)
      const other = FencedLease.reread(held, { amount: 40n, fence: "8" })
      assert.deepStrictEqual(other, { lease: { amount: 40n, reserved: 0n, pending: 0n }, fence: "8", validUntilNanos: 0n })
      // A first grant that failed after it committed: the row is found and held, and granted again before use.
      const adopted = FencedLease.reread(FencedLease.empty, { amount: 64n, fence: "3" })
      assert.deepStrictEqual(adopted, { lease: { amount: 64n, reserved: 0n, pending: 0n }, fence: "3", validUntilNanos: 0n })
      assert.isUndefined(yield* admitNow(adopted, 1n))
      assert.deepStrictEqual((yield* grantNow(adopted, 0n, "3")).lease, adopted.lease)
    }))
})

describe("FencedLease: a row answered under a lease that moved", () => {
  it("is written when every scope that counts it has room for its cost, and refused only when one would overshoot", () => {
    assert.isTrue(FencedLease.settlesMoved(40n, [40n, undefined, 100n]), "exactly the room left fits")
    assert.isFalse(FencedLease.settlesMoved(41n, [40n, undefined, 100n]), "one over the key limit's room is refused")
    assert.isFalse(FencedLease.settlesMoved(41n, [undefined, 100n, 40n]), "any scope refuses: here the credits")
    assert.isTrue(FencedLease.settlesMoved(1_000n, [undefined, undefined, undefined]), "no scope counts it: written")
    assert.isTrue(FencedLease.settlesMoved(0n, [-5n]), "a row costing nothing never overshoots, even past a limit")
  })
})
