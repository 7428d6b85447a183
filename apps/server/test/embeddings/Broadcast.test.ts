import { assert, describe, it } from "@effect/vitest"
import { builtin } from "@switchyard/core/catalog/BuiltinCatalog"
import * as RoutePlan from "@switchyard/core/routing/RoutePlan"
import { Clock, Effect, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { HttpClient, HttpClientResponse } from "effect/http"
import { CurrentCatalog } from "../../src/catalog/CatalogLoader.ts"
import { Broadcast, isRetryableStatus, type ServedEvent } from "../../src/embeddings/Broadcast.ts"

// A request served by the built-in catalog's local model, as the embeddings task hands it over.
const plan = Result.getOrThrow(RoutePlan.compute({ catalog: builtin, model: "switchyard/local-embed", isActive: () => true, now: 0, seed: 1 }))
const event: ServedEvent = {
  request: { model: "acme/embed", input: "hello" },
  served: {
    id: "gen-1",
    model: "acme/embed",
    provider: "alpha",
    endpoint: "alpha/acme-embed",
    data: [],
    encoding: "float",
    dimensions: 8,
    promptTokens: 1,
    totalTokens: 1,
    modalityTokens: undefined,
    costNanos: 0n,
    upstreamCostAtto: 0n,
    isByok: false,
    plan,
    attempts: [],
    vectorSpaceChange: undefined,
    cache: { outcome: "bypass", items: 0, tokens: 0, bytes: 0 }
  },
  caller: { keyId: "key-1", keyHash: "hash-1", kind: "standard", userId: "user-1", workspaceId: "ws-1" },
  sessionId: undefined
}

// Broadcast over an HTTP client that answers the deliveries with `statuses` in turn (the last one
// from then on); the test clock's time of each try.
const deliveriesAt = (statuses: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const tries: Array<number> = []
    const client = HttpClient.make((request) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        tries.push(now)
        const status = statuses[Math.min(tries.length, statuses.length) - 1]!
        return HttpClientResponse.fromWeb(request, new Response("{}", { status }))
      })
    )
    const layer = Broadcast.layer.pipe(
      Layer.provide(Layer.succeed(CurrentCatalog, {
        catalog: { ...builtin, broadcast: [{ url: "http://127.0.0.1:9/events" }] },
        credentials: new Map(),
        active: new Set<string>()
      })),
      Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
    )
    yield* Effect.gen(function*() {
      const broadcast = yield* Broadcast
      yield* broadcast.publish(event)
      for (let i = 0; i < 10; i++) yield* TestClock.adjust("1 second")
    }).pipe(Effect.provide(layer), Effect.scoped)
    return tries
  })

const deliveriesAnswered = (status: number) => Effect.map(deliveriesAt([status]), (tries) => tries.length)

describe("broadcast delivery", () => {
  it("retries only answers that may change: 5xx, 408 and 429", () => {
    for (const status of [408, 429, 500, 502, 503, 504]) assert.isTrue(isRetryableStatus(status), String(status))
    for (const status of [300, 400, 401, 403, 404, 409, 413, 422]) assert.isFalse(isRetryableStatus(status), String(status))
  })

  it.effect("a 4xx refusal other than 408 and 429 is delivered once; those two and 5xx are tried five times", () =>
    Effect.gen(function*() {
      for (const status of [400, 401, 404, 413, 422]) assert.strictEqual(yield* deliveriesAnswered(status), 1, String(status))
      for (const status of [408, 429, 500, 503]) assert.strictEqual(yield* deliveriesAnswered(status), 5, String(status))
      assert.strictEqual(yield* deliveriesAnswered(200), 1)
    }))

  it.effect("retries back off (200 ms, then 400 ms) and stop at the first success", () =>
    Effect.gen(function*() {
      const tries = yield* deliveriesAt([500, 503, 200])
      assert.strictEqual(tries.length, 3, "nothing after the delivery that succeeded")
      assert.isAtLeast(tries[1]! - tries[0]!, 200)
      assert.isAtLeast(tries[2]! - tries[1]!, 400)
    }))
})
