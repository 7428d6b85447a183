import { assert, describe, it } from "@effect/vitest"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { outageWindowMs, Replicas } from "../../src/providers/Replicas.ts"

const provider = {
  slug: "gpu-tei",
  name: "GPU TEI",
  adapter: "tei",
  base_urls: ["http://a", "http://b", "http://c"],
  data_collection: "deny",
  zdr: false,
  enabled: true,
  endpoints: []
} as unknown as Catalog.Provider

const connection = { baseUrl: "http://a", apiKey: undefined }

describe("Replicas", () => {
  it.effect("least in flight first: three calls held open land on three replicas", () =>
    Effect.gen(function*() {
      const replicas = yield* Replicas
      const release = yield* Deferred.make<void>()
      const seen: Array<string> = []
      const fibers = yield* Effect.forEach([1, 2, 3], () =>
        Effect.forkChild(replicas.through(provider, connection, (c) => Effect.sync(() => seen.push(c.baseUrl)).pipe(Effect.andThen(Deferred.await(release))))))
      yield* Effect.yieldNow
      assert.deepStrictEqual([...seen].sort(), ["http://a", "http://b", "http://c"])
      assert.deepStrictEqual(replicas.report(provider, 0).map((r) => r.in_flight), [1, 1, 1])
      yield* Deferred.succeed(release, undefined)
      yield* Effect.forEach(fibers, Fiber.join)
      assert.deepStrictEqual(replicas.report(provider, 0).map((r) => r.in_flight), [0, 0, 0])
    }).pipe(Effect.provide(Replicas.layer)))

  it.effect("a replica's own failure moves the call to the next one and holds it out for the outage window; a request's fault does not", () =>
    Effect.gen(function*() {
      const replicas = yield* Replicas
      const tried: Array<string> = []
      const failing = (bad: string, error: UpstreamError.UpstreamError) => (c: { readonly baseUrl: string }) =>
        Effect.suspend(() => {
          tried.push(c.baseUrl)
          return c.baseUrl === bad ? Effect.fail(error) : Effect.succeed(c.baseUrl)
        })
      const answered = yield* replicas.through(provider, connection, failing("http://a", UpstreamError.unreachable("refused")))
      assert.notStrictEqual(answered, "http://a")
      assert.strictEqual(tried[0], "http://a")
      assert.isFalse(replicas.report(provider, 0).find((r) => r.base_url === "http://a")!.healthy)
      tried.length = 0
      for (let i = 0; i < 6; i++) yield* replicas.through(provider, connection, failing("none", UpstreamError.unreachable("x")))
      assert.notInclude(tried, "http://a")
      yield* TestClock.adjust(outageWindowMs)
      assert.isTrue(replicas.report(provider, outageWindowMs).every((r) => r.healthy))
      // A bad request is the request's: the same answer everywhere, so no other replica is tried.
      tried.length = 0
      const badInput = UpstreamError.of(new UpstreamError.InvalidRequest({ upstream_status: 400, provider_message: "bad input" }))
      const error = yield* Effect.flip(replicas.through(provider, connection, (c) =>
        Effect.suspend(() => {
          tried.push(c.baseUrl)
          return Effect.fail(badInput)
        })))
      assert.strictEqual(error.reason._tag, "InvalidRequest")
      assert.strictEqual(tried.length, 1)
      assert.isTrue(replicas.report(provider, outageWindowMs).every((r) => r.healthy))
    }).pipe(Effect.provide(Replicas.layer)))

  it.effect("every replica failing fails the call with the last failure", () =>
    Effect.gen(function*() {
      const replicas = yield* Replicas
      const error = yield* Effect.flip(replicas.through(provider, connection, (c) => Effect.fail(UpstreamError.of(new UpstreamError.ServerError({ upstream_status: 503, provider_message: c.baseUrl })))))
      assert.strictEqual(error.reason._tag, "ServerError")
      assert.isTrue(replicas.report(provider, 0).every((r) => !r.healthy))
    }).pipe(Effect.provide(Replicas.layer)))
})
