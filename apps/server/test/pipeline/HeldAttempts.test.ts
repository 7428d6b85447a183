import { assert, describe, it } from "@effect/vitest"
import { builtin } from "@switchyard/core/catalog/BuiltinCatalog"
import { RequestTimedOut } from "@switchyard/core/errors/EmbeddingsError"
import { type Candidate, endpointId } from "@switchyard/core/routing/Candidates"
import type { Accounting, Reservation } from "@switchyard/core/store/Accounting"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import { Clock, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as HeldAttempts from "../../src/pipeline/HeldAttempts.ts"

// Three endpoints; the first provider sets its own time limit.
const candidates: ReadonlyArray<Candidate> = builtin.providers
  .filter((p) => p.slug === "openai" || p.slug === "deepinfra" || p.slug === "together")
  .map((p, i) => (i === 0 ? { ...p, timeout_ms: 600 } : p))
  .map((provider) => ({ provider, endpoint: provider.endpoints[0]!, id: endpointId(provider, provider.endpoints[0]!) }))
const attempts: ReadonlyArray<Fallback.Attempt> = candidates.map((candidate) => ({ candidate, byok: false }))

const reservation: Reservation = { id: "r1", keyId: "k", workspaceId: "w", amountNanos: 10n, byok: false, lease: null }

// Each endpoint makes upstream calls of its scripted milliseconds (one after the other, as batches
// can), then answers with its id; the run's clock is the test's.
const runScripted = (
  msByAttempt: ReadonlyArray<number | ReadonlyArray<number>>,
  limits: { readonly requestMs: number; readonly attemptMs: number }
) =>
  Effect.gen(function*() {
    const released: Array<string> = []
    const started: Array<number> = []
    // HeldAttempts only hands a failed run's hold back.
    const unused = () => Effect.die(new Error("HeldAttempts only releases"))
    const accounting: Accounting["Service"] = {
      release: (r: Reservation) => Effect.sync(() => void released.push(r.id)),
      reserve: unused,
      settle: unused,
      record: unused,
      credits: unused,
      addCredits: unused
    }
    const run = HeldAttempts.run({
      accounting,
      reservation,
      attempts,
      call: (a, limit) =>
        Effect.gen(function*() {
          started.push(yield* Clock.currentTimeMillis)
          const calls = msByAttempt[started.length - 1]!
          for (const ms of typeof calls === "number" ? [calls] : calls) yield* limit(Effect.sleep(ms))
          return a.candidate.id
        }),
      observe: () => Effect.void,
      span: "Test.attempt",
      tokensOf: () => 0,
      timeoutMs: limits.requestMs,
      attemptTimeoutMs: limits.attemptMs
    })
    const fiber = yield* Effect.forkChild(run)
    yield* TestClock.adjust("1 minute")
    const exit = yield* Fiber.await(fiber)
    return { exit, released, started }
  })

describe("HeldAttempts.run: one timer per upstream call", () => {
  it.effect("an attempt past its provider's limit falls back; the next runs on the gateway's limit", () =>
    Effect.gen(function*() {
      const { exit, released, started } = yield* runScripted([10_000, 900], { requestMs: 30_000, attemptMs: 1_000 })
      assert.isTrue(Exit.isSuccess(exit))
      if (!Exit.isSuccess(exit)) return
      assert.strictEqual(exit.value.value, candidates[1]!.id)
      assert.deepStrictEqual(started, [0, 600])
      assert.deepStrictEqual(exit.value.reports.map((r) => [r.outcome, r.reason, r.latency_ms]), [["failure", "Timeout", 600], ["success", undefined, 900]])
      assert.deepStrictEqual(released, [])
    }))

  it.effect("the request's deadline inside an attempt ends the request there and releases the hold", () =>
    Effect.gen(function*() {
      // The first times out at its provider's 600 ms; the second has 400 ms of the request's 1,000 left.
      const { exit, released, started } = yield* runScripted([10_000, 10_000, 10], { requestMs: 1_000, attemptMs: 5_000 })
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? (exit.cause.reasons[0] as { readonly error: unknown }).error : undefined
      assert.instanceOf(error, RequestTimedOut)
      assert.strictEqual((error as RequestTimedOut).timeoutMs, 1_000)
      assert.deepStrictEqual(started, [0, 600])
      assert.deepStrictEqual(released, [reservation.id])
    }))

  it.effect("when the request's time ends with the provider's limit, the request has timed out: no fallback", () =>
    Effect.gen(function*() {
      // The provider's 600 ms limit is also all the request's time.
      const { exit, started } = yield* runScripted([10_000, 10], { requestMs: 600, attemptMs: 5_000 })
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? (exit.cause.reasons[0] as { readonly error: unknown }).error : undefined
      assert.instanceOf(error, RequestTimedOut)
      assert.deepStrictEqual(started, [0])
    }))

  it.effect("the provider's limit bounds each upstream call of an attempt, not the sum of its batches", () =>
    Effect.gen(function*() {
      const { exit, started } = yield* runScripted([[500, 500, 500]], { requestMs: 30_000, attemptMs: 5_000 })
      assert.isTrue(Exit.isSuccess(exit))
      if (!Exit.isSuccess(exit)) return
      assert.strictEqual(exit.value.value, candidates[0]!.id)
      assert.deepStrictEqual(exit.value.reports.map((r) => r.latency_ms), [1_500])
      assert.deepStrictEqual(started, [0])
    }))
})
