import { assert, describe, it } from "@effect/vitest"
import { Data, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { builtin } from "../../src/catalog/BuiltinCatalog.ts"
import { type Candidate, endpointId } from "../../src/routing/Candidates.ts"
import * as Fallback from "../../src/upstream/Fallback.ts"
import * as UpstreamAnswer from "../../src/upstream/UpstreamAnswer.ts"
import * as UpstreamError from "../../src/upstream/UpstreamError.ts"

const candidates: ReadonlyArray<Candidate> = builtin.providers
  .filter((p) => p.slug === "openai" || p.slug === "deepinfra" || p.slug === "together")
  .map((provider) => ({ provider, endpoint: provider.endpoints[0]!, id: endpointId(provider, provider.endpoints[0]!) }))

const attempts: ReadonlyArray<Fallback.Attempt> = candidates.map((candidate, i) => ({ candidate, byok: i === 1 }))

const status = (code: number, body = "") => UpstreamAnswer.fromResponse({ status: code, headers: {}, body }, 0)

// Each endpoint answers in turn: a number of milliseconds it takes, then an error or a value.
const scripted = (script: ReadonlyArray<readonly [ms: number, UpstreamError.UpstreamError | string]>) => {
  const calls: Array<string> = []
  const call = (attempt: Fallback.Attempt) =>
    Effect.gen(function*() {
      const [ms, outcome] = script[calls.length]!
      calls.push(attempt.candidate.id)
      yield* Effect.sleep(ms)
      return typeof outcome === "string" ? outcome : yield* outcome
    })
  return { calls, call }
}

// Runs with the test clock moved on until the run ends.
const runTimed = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(effect)
    yield* TestClock.adjust("10 seconds")
    return yield* Fiber.await(fiber)
  })

describe("Fallback.run", () => {
  it.effect("serves the first answer and reports its latency on the clock", () =>
    Effect.gen(function*() {
      const { call, calls } = scripted([[250, "vectors"]])
      const exit = yield* runTimed(Fallback.run(attempts, call))
      assert.isTrue(Exit.isSuccess(exit))
      if (!Exit.isSuccess(exit)) return
      assert.strictEqual(exit.value.value, "vectors")
      assert.strictEqual(exit.value.attempt.candidate.id, candidates[0]!.id)
      assert.deepStrictEqual(exit.value.reports, [
        { endpoint: candidates[0]!.id, provider: "openai", outcome: "success", latency_ms: 250, byok: false }
      ])
      assert.deepStrictEqual(calls, [candidates[0]!.id])
    }))

  it.effect("moves on after a failure about the provider and tells the observer about each attempt", () =>
    Effect.gen(function*() {
      const { call, calls } = scripted([[100, status(429)], [40, UpstreamError.timeout(40)], [10, "vectors"]])
      const seen: Array<string> = []
      const observe = (o: Fallback.Observed<string>) =>
        Effect.sync(() => seen.push(`${o._tag}:${o.attempt.candidate.provider.slug}:${o.latencyMs}@${o.at}`))
      const exit = yield* runTimed(Fallback.run(attempts, call, observe))
      assert.isTrue(Exit.isSuccess(exit))
      if (!Exit.isSuccess(exit)) return
      assert.deepStrictEqual(calls, candidates.map((c) => c.id))
      assert.deepStrictEqual(seen, ["Failure:openai:100@100", "Failure:together:40@140", "Success:deepinfra:10@150"])
      const [limited, slow] = exit.value.reports
      assert.deepInclude(limited, { outcome: "failure", reason: "RateLimited", status: 429, byok: false, latency_ms: 100 })
      assert.deepInclude(slow, { outcome: "failure", reason: "Timeout", status: 524, byok: true })
      assert.include(slow!.message, `Provider "together" did not answer in time`)
    }))

  it.effect("stops at a failure about the request itself and answers with it and every attempt", () =>
    Effect.gen(function*() {
      const { call, calls } = scripted([[5, status(503)], [5, status(400, `{"error":{"message":"'input' must not be empty"}}`)]])
      const exit = yield* runTimed(Fallback.run(attempts, call))
      assert.deepStrictEqual(calls, [candidates[0]!.id, candidates[1]!.id])
      assert.isTrue(Exit.isFailure(exit))
      const failed = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      assert.strictEqual(failed?._tag, "Fail")
      const error = (failed as { readonly error: Fallback.UpstreamFailed }).error
      assert.strictEqual(error.provider, "together")
      assert.strictEqual(error.error.reason._tag, "InvalidRequest")
      const api = Fallback.failedToApiError(error)
      assert.strictEqual(api._tag, "BadRequest")
      assert.include(api.message, "'input' must not be empty")
      assert.deepInclude(api.metadata, { provider_name: "together", reason: "InvalidRequest", upstream_status: 400 })
      assert.deepStrictEqual((api.metadata!.attempts as ReadonlyArray<Fallback.AttemptReport>).map((r) => r.reason), [
        "Unavailable",
        "InvalidRequest"
      ])
    }))

  it.effect("answers with the last failure when every endpoint failed", () =>
    Effect.gen(function*() {
      const { call } = scripted([[1, status(500)], [1, status(502)], [1, UpstreamError.unreachable("ECONNREFUSED")]])
      const exit = yield* runTimed(Fallback.run(attempts, call))
      const error = Exit.isFailure(exit) ? (exit.cause.reasons[0] as { readonly error: Fallback.UpstreamFailed }).error : undefined
      assert.strictEqual(error?.error.reason._tag, "Unreachable")
      assert.strictEqual(Fallback.failedToApiError(error!)._tag, "BadGateway")
      assert.strictEqual(error?.attempts.length, 3)
    }))

  it.effect("a defect in an attempt is not a failure to fall back from", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const exit = yield* Effect.exit(Fallback.run(attempts, (a) => {
        calls.push(a.candidate.id)
        return Effect.die("bug")
      }))
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual(calls.length, 1)
    }))

  it.effect("an error of another kind than the upstream's ends the run with it, unreported", () =>
    Effect.gen(function*() {
      class Deadline extends Data.TaggedError("Deadline") {}
      const calls: Array<string> = []
      const observed: Array<string> = []
      const exit = yield* Effect.exit(Fallback.run(
        attempts,
        (a) => {
          calls.push(a.candidate.id)
          return calls.length === 1 ? UpstreamError.timeout(100) : Effect.fail(new Deadline())
        },
        (o) => Effect.sync(() => observed.push(o._tag))
      ))
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual(Exit.isFailure(exit) ? (exit.cause.reasons[0] as { readonly error: unknown }).error instanceof Deadline : false, true)
      // The first attempt timed out and was reported; the second ended the run; the third never ran.
      assert.deepStrictEqual(calls, [candidates[0]!.id, candidates[1]!.id])
      assert.deepStrictEqual(observed, ["Failure"])
    }))
})
