import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Option } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpClientResponse } from "effect/http"
import { TestClock } from "effect/testing"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as RetryPolicy from "../src/RetryPolicy.ts"

const fast: RetryPolicy.RetryPolicy = { retries: 3, baseDelay: "10 millis", maxDelay: "40 millis", maxRetryAfter: "5 seconds" }

const decide = (outcome: RetryPolicy.Outcome, options: { replaySafe?: boolean; retry?: number; now?: number; random?: number } = {}) =>
  RetryPolicy.decide(fast, {
    outcome,
    replaySafe: options.replaySafe ?? true,
    retry: options.retry ?? 0,
    now: options.now ?? 0,
    random: options.random ?? 0.999999
  }).pipe(Option.map(Duration.toMillis))

const answered = (status: number, retryAfter?: string): RetryPolicy.Outcome => ({ _tag: "Answered", status, retryAfter })

describe("RetryPolicy.decide", () => {
  it("retries exactly the transient statuses", () => {
    for (let status = 200; status < 600; status++) {
      assert.strictEqual(Option.isSome(decide(answered(status))), [408, 429, 500, 502, 503, 524, 529].includes(status), String(status))
    }
  })

  it("retries a request that is not replay-safe only when the server did no work or it never left", () => {
    for (const status of [408, 500, 502, 524]) assert.isTrue(Option.isNone(decide(answered(status), { replaySafe: false })), String(status))
    for (const status of [429, 503, 529]) assert.isTrue(Option.isSome(decide(answered(status), { replaySafe: false })), String(status))
    assert.isTrue(Option.isNone(decide({ _tag: "TransportFailed", sent: true }, { replaySafe: false })))
    assert.isTrue(Option.isSome(decide({ _tag: "TransportFailed", sent: false }, { replaySafe: false })))
    assert.isTrue(Option.isSome(decide({ _tag: "TransportFailed", sent: true }, { replaySafe: true })))
  })

  it("stops after the configured number of retries", () => {
    assert.isTrue(Option.isSome(decide(answered(503), { retry: 2 })))
    assert.isTrue(Option.isNone(decide(answered(503), { retry: 3 })))
  })

  it("backs off exponentially up to the cap, with jitter between half and all of it", () => {
    assert.deepStrictEqual(decide(answered(500), { retry: 0, random: 0 }), Option.some(5))
    assert.deepStrictEqual(decide(answered(500), { retry: 1, random: 0.999999 }), Option.some(20))
    assert.deepStrictEqual(decide(answered(500), { retry: 2, random: 0.999999 }), Option.some(40))
    assert.deepStrictEqual(decide(answered(500), { retry: 3, random: 0.999999 }), Option.none())
  })

  it("waits at least what Retry-After asks, in seconds or as a date, and not at all past the limit", () => {
    assert.deepStrictEqual(decide(answered(429, "2")), Option.some(2000))
    const now = Date.parse("2026-01-01T00:00:00Z")
    assert.deepStrictEqual(decide(answered(503, "Thu, 01 Jan 2026 00:00:03 GMT"), { now }), Option.some(3000))
    assert.deepStrictEqual(decide(answered(503, "Wed, 31 Dec 2025 00:00:00 GMT"), { now }), Option.some(10))
    assert.deepStrictEqual(decide(answered(429, "not a date")), Option.some(10))
    assert.deepStrictEqual(decide(answered(429, "6")), Option.none())
  })

  it("treats reads, deletes and embeddings as replay-safe, and other writes as not", () => {
    assert.isTrue(RetryPolicy.isReplaySafe({ method: "GET", url: "http://h/api/v1/keys" }))
    assert.isTrue(RetryPolicy.isReplaySafe({ method: "DELETE", url: "http://h/api/v1/interns/x" }))
    assert.isTrue(RetryPolicy.isReplaySafe({ method: "POST", url: "http://h/api/v1/embeddings" }))
    assert.isTrue(RetryPolicy.isReplaySafe({ method: "POST", url: "http://h/api/v1/embeddings/plan" }))
    assert.isTrue(RetryPolicy.isReplaySafe({ method: "POST", url: "http://h/api/v1/rerank" }))
    assert.isTrue(RetryPolicy.isReplaySafe({ method: "POST", url: "http://h/api/v1/rerank/plan" }))
    assert.isFalse(RetryPolicy.isReplaySafe({ method: "POST", url: "http://h/api/v1/credits" }))
    assert.isFalse(RetryPolicy.isReplaySafe({ method: "POST", url: "http://h/api/v1/interns/x/suspend" }))
    assert.isFalse(RetryPolicy.isReplaySafe({ method: "PATCH", url: "http://h/api/v1/interns/x" }))
  })
})

// A client whose answers are scripted, noting the time on Effect's clock of every attempt.
const scripted = (answers: Array<{ readonly status: number; readonly headers?: Record<string, string> }>, seen: Array<number>) =>
  HttpClient.make((request) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      seen.push(now)
      const answer = answers.shift() ?? { status: 200 }
      return HttpClientResponse.fromWeb(request, new Response(null, { status: answer.status, headers: answer.headers ?? {} }))
    })
  )

describe("RetryPolicy.apply on the test clock", () => {
  it.effect("waits what Retry-After asks before the next attempt, and not a moment less", () =>
    Effect.gen(function*() {
      const seen: Array<number> = []
      const client = RetryPolicy.apply(fast)(scripted([{ status: 429, headers: { "retry-after": "1" } }], seen))
      const fiber = yield* Effect.forkChild(client.execute(HttpClientRequest.get("http://h/api/v1/keys")))
      yield* TestClock.adjust("999 millis")
      assert.strictEqual(seen.length, 1)
      yield* TestClock.adjust("1 millis")
      const response = yield* Fiber.join(fiber)
      assert.strictEqual(response.status, 200)
      assert.deepStrictEqual(seen, [0, 1000])
    }))

  it.effect("backs off exponentially, capped, between half and all of each step", () =>
    Effect.gen(function*() {
      const seen: Array<number> = []
      const slow: RetryPolicy.RetryPolicy = { retries: 3, baseDelay: "1 second", maxDelay: "3 seconds", maxRetryAfter: "1 minute" }
      const client = RetryPolicy.apply(slow)(scripted([{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }], seen))
      const fiber = yield* Effect.forkChild(client.execute(HttpClientRequest.get("http://h/api/v1/keys")))
      yield* TestClock.adjust("1 minute")
      const response = yield* Fiber.join(fiber)
      assert.strictEqual(response.status, 503)
      const waits = seen.slice(1).map((at, i) => at - seen[i]!)
      assert.strictEqual(waits.length, 3)
      const steps = [1000, 2000, 3000]
      waits.forEach((w, i) => {
        assert.isAtLeast(w, steps[i]! / 2, `wait ${i}`)
        assert.isAtMost(w, steps[i]!, `wait ${i}`)
      })
    }))

  it.effect("returns a 429 at once when its Retry-After is longer than the policy honours", () =>
    Effect.gen(function*() {
      const seen: Array<number> = []
      const client = RetryPolicy.apply(fast)(scripted([{ status: 429, headers: { "retry-after": "30" } }], seen))
      const response = yield* client.execute(HttpClientRequest.get("http://h/api/v1/keys"))
      assert.strictEqual(response.status, 429)
      assert.deepStrictEqual(seen, [0])
    }))
})

interface Script {
  readonly answers: Array<{ readonly status: number; readonly headers?: Record<string, string> }>
  readonly seen: Array<{ readonly method: string; readonly authorization: string | undefined; readonly body: string; readonly at: number }>
}

describe("RetryPolicy.apply over HTTP", () => {
  let server: Http.Server
  let origin: string
  const script: Script = { answers: [], seen: [] }

  beforeAll(async () => {
    server = Http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        script.seen.push({ method: request.method ?? "", authorization: request.headers.authorization, body, at: Date.now() })
        const answer = script.answers.shift() ?? { status: 200 }
        response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers })
        response.end(JSON.stringify({ status: answer.status }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const run = (request: HttpClientRequest.HttpClientRequest, answers: Script["answers"], policy = fast) =>
    Effect.gen(function*() {
      script.answers.splice(0, script.answers.length, ...answers)
      script.seen.splice(0)
      const client = RetryPolicy.apply(policy)(yield* HttpClient.HttpClient)
      return yield* client.execute(request)
    }).pipe(Effect.provide(FetchHttpClient.layer))

  it.live("sends a replay-safe request again, same headers and body, until it succeeds", () =>
    Effect.gen(function*() {
      const request = HttpClientRequest.post(`${origin}/api/v1/embeddings`).pipe(
        HttpClientRequest.bearerToken("sk-test"),
        HttpClientRequest.bodyJsonUnsafe({ input: "a", model: "x/y" })
      )
      const response = yield* run(request, [{ status: 502 }, { status: 524 }, { status: 200 }])
      assert.strictEqual(response.status, 200)
      assert.strictEqual(script.seen.length, 3)
      for (const seen of script.seen) {
        assert.strictEqual(seen.authorization, "Bearer sk-test")
        assert.deepStrictEqual(JSON.parse(seen.body), { input: "a", model: "x/y" })
      }
    }))


  it.live("returns the last answer once the retries are spent", () =>
    Effect.gen(function*() {
      const response = yield* run(HttpClientRequest.get(`${origin}/api/v1/keys`), Array.from({ length: 10 }, () => ({ status: 503 })))
      assert.strictEqual(response.status, 503)
      assert.strictEqual(script.seen.length, 4)
    }))

  it.live("does not send a PATCH again after a 500, nor anything after a 4xx other than 408 and 429", () =>
    Effect.gen(function*() {
      const patched = yield* run(HttpClientRequest.patch(`${origin}/api/v1/interns/i`), [{ status: 500 }])
      assert.strictEqual(patched.status, 500)
      assert.strictEqual(script.seen.length, 1)
      for (const status of [400, 401, 403, 404, 409, 413]) {
        const response = yield* run(HttpClientRequest.get(`${origin}/api/v1/keys`), [{ status }])
        assert.strictEqual(response.status, status)
        assert.strictEqual(script.seen.length, 1, String(status))
      }
    }))

  it.live("sends a POST again when the connection was refused, since it never left", () =>
    Effect.gen(function*() {
      const closed = Http.createServer()
      yield* Effect.promise(() => new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve)))
      const port = (closed.address() as AddressInfo).port
      yield* Effect.promise(() => new Promise<void>((resolve) => closed.close(() => resolve())))
      let calls = 0
      const counting: typeof fetch = (input, init) => {
        calls++
        return fetch(input, init)
      }
      const error = yield* Effect.gen(function*() {
        const client = RetryPolicy.apply(fast)(yield* HttpClient.HttpClient)
        return yield* client.execute(HttpClientRequest.post(`http://127.0.0.1:${port}/api/v1/interns`))
      }).pipe(
        Effect.provide(FetchHttpClient.layer),
        Effect.provideService(FetchHttpClient.Fetch, counting),
        Effect.flip
      )
      assert.strictEqual(error.reason._tag, "TransportError")
      assert.strictEqual(calls, 4)
    }))

  it.live("gives up an attempt after the time limit and reports it as a transport failure", () =>
    Effect.gen(function*() {
      const slow = Http.createServer(() => {})
      yield* Effect.promise(() => new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve)))
      const port = (slow.address() as AddressInfo).port
      const error = yield* Effect.gen(function*() {
        const client = RetryPolicy.apply({ ...fast, retries: 0 }, { timeout: "100 millis" })(yield* HttpClient.HttpClient)
        return yield* client.execute(HttpClientRequest.get(`http://127.0.0.1:${port}/api/v1/keys`))
      }).pipe(Effect.provide(FetchHttpClient.layer), Effect.flip)
      slow.closeAllConnections()
      yield* Effect.promise(() => new Promise<void>((resolve) => slow.close(() => resolve())))
      assert.strictEqual(error.reason._tag, "TransportError")
      assert.include(error.message, "no answer within")
    }))
})
