import { assert, describe, it } from "@effect/vitest"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import * as ApiError from "../../src/schema/ApiError.ts"
import { Clock, Effect, Schema } from "effect"
import { Headers } from "effect/http"
import { FailureClass } from "../../src/upstream/FailureClass.ts"
import * as UpstreamAnswer from "../../src/upstream/UpstreamAnswer.ts"
import * as UpstreamError from "../../src/upstream/UpstreamError.ts"

const context = { provider: "openai", endpoint: "openai/default@openai/text-embedding-3-small" }
const wireStatuses = Object.keys(ApiError.wire).map(Number)

const fromStatus = (status: number, body = "", headers: Record<string, string> = {}) =>
  Effect.map(Clock.currentTimeMillis, (now) =>
    UpstreamAnswer.fromResponse({ status, headers: Headers.fromInput(headers), body }, now))

const toApi = (failure: UpstreamError.UpstreamError) => UpstreamError.toApiError(failure, context)

describe("UpstreamError policy", () => {
  it("gives every reason a status, a fallback class and a health verdict", () => {
    const reasonTags = UpstreamError.Reason.members.map((member) => member.identifier)
    assert.deepStrictEqual([...reasonTags].sort(), Object.keys(UpstreamError.policy).sort())
    assert.isAtLeast(reasonTags.length, 15)
    // The policy's keys are the reasons' tags (above): each entry is a reason's.
    for (const [tag, entry] of Object.entries(UpstreamError.policy)) {
      assert.include(wireStatuses, entry.status, tag)
      assert.include(FailureClass.literals, entry.failureClass, tag)
      assert.isBoolean(entry.countsAgainstEndpoint, tag)
    }
  })

  it.effect("maps every upstream status to a status the endpoint declares", () =>
    Effect.gen(function*() {
      for (let status = 100; status < 600; status++) {
        const failure = yield* fromStatus(status)
        assert.include(wireStatuses, failure.status, String(status))
        assert.include(FailureClass.literals, failure.failureClass)
        assert.strictEqual(UpstreamError.toApiError(failure, context)._tag, ApiError.fromStatus(failure.status, "")._tag)
      }
    }))
})

describe("UpstreamAnswer.fromResponse", () => {
  const cases: ReadonlyArray<readonly [status: number, body: string, reason: UpstreamError.ReasonTag, status: number, cls: FailureClass]> = [
    [429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, "RateLimited", 429, "next_provider"],
    [429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`, "QuotaExhausted", 502, "next_provider"],
    [402, `{"message":"Payment required"}`, "QuotaExhausted", 502, "next_provider"],
    [401, `{"error":{"message":"Incorrect API key provided: sk-abc***xyz"}}`, "AuthFailed", 502, "next_provider"],
    [403, `{"error":{"code":403,"message":"Permission denied","status":"PERMISSION_DENIED"}}`, "AuthFailed", 502, "next_provider"],
    [400, `{"error":{"message":"'input' must not be empty","type":"invalid_request_error"}}`, "InvalidRequest", 400, "stop"],
    [400, `{"error":{"message":"This model's maximum context length is 8192 tokens"}}`, "InvalidRequest", 400, "next_provider"],
    [422, `{"detail":[{"msg":"input_type must be query or document"}]}`, "InvalidRequest", 400, "stop"],
    [400, `{"message":"model 'embed-v9' not found"}`, "ModelNotFound", 502, "next_provider"],
    [404, `{"error":{"message":"The model does not exist"}}`, "ModelNotFound", 502, "next_provider"],
    [413, "", "InputTooLarge", 413, "next_provider"],
    [408, "", "Timeout", 524, "next_provider"],
    [504, "", "Timeout", 524, "next_provider"],
    [500, `{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}`, "ServerError", 502, "next_provider"],
    [502, "<html>bad gateway</html>", "ServerError", 502, "next_provider"],
    [503, "", "Unavailable", 503, "next_provider"],
    [529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded", 529, "next_provider"],
    [302, "", "Unknown", 502, "stop"]
  ]

  it.effect("classifies by status, refined by what the provider says", () =>
    Effect.gen(function*() {
      for (const [status, body, reason, wireStatus, cls] of cases) {
        const failure = yield* fromStatus(status, body)
        assert.strictEqual(failure.reason._tag, reason, `${status} ${body}`)
        assert.strictEqual(failure.status, wireStatus, `${status} ${body}`)
        assert.strictEqual(failure.failureClass, cls, `${status} ${body}`)
      }
    }))

  it.effect("reads retry-after in seconds, milliseconds or as an HTTP date", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2025-01-01T00:00:00Z"))
      const seconds = yield* fromStatus(429, "", { "Retry-After": "7" })
      assert.strictEqual((seconds.reason as UpstreamError.RateLimited).retry_after_ms, 7000)
      const ms = yield* fromStatus(429, "", { "retry-after-ms": "250", "retry-after": "9" })
      assert.strictEqual((ms.reason as UpstreamError.RateLimited).retry_after_ms, 250)
      const date = yield* fromStatus(503, "", { "retry-after": "Wed, 01 Jan 2025 00:00:30 GMT" })
      assert.strictEqual((date.reason as UpstreamError.Unavailable).retry_after_ms, 30_000)
      const reset = yield* fromStatus(429, "", { "x-ratelimit-reset-requests": "1m30s" })
      assert.strictEqual((reset.reason as UpstreamError.RateLimited).retry_after_ms, 90_000)
      assert.include(seconds.message, "retry after 7s")
    }))
})

describe("UpstreamError constructors", () => {
  it("give the reasons adapters report without a status", () => {
    const reasons: ReadonlyArray<readonly [UpstreamError.UpstreamError, UpstreamError.ReasonTag]> = [
      [UpstreamError.timeout(30_000), "Timeout"],
      [UpstreamError.unreachable("ECONNREFUSED"), "Unreachable"],
      [UpstreamError.connectionLost("socket hang up"), "ConnectionLost"],
      [UpstreamError.invalidResponse("expected 2 vectors, got 1"), "InvalidResponse"],
      [UpstreamError.widthMismatch(256, 1536), "InvalidResponse"],
      [UpstreamError.unsupportedInput("token ids"), "UnsupportedInput"]
    ]
    for (const [error, tag] of reasons) assert.strictEqual(error.reason._tag, tag, tag)
    const width = UpstreamError.toApiError(UpstreamError.widthMismatch(256, 1536), context)
    assert.include(width.message, "expected vectors of 256 dimensions, got 1536")
    assert.strictEqual(UpstreamError.widthMismatch(256, 1536).status, 502)
  })

  it("every reason is plain data that survives encoding and has a message", () => {
    const codec = Schema.toCodecJson(UpstreamError.UpstreamError)
    const errors = [
      UpstreamAnswer.fromResponse({ status: 429, headers: { "retry-after": "1" }, body: `{"error":{"message":"slow down"}}` }, 0),
      UpstreamError.timeout(300),
      UpstreamError.unreachable("connect ECONNREFUSED 127.0.0.1:1"),
      UpstreamError.connectionLost("other side closed"),
      UpstreamError.widthMismatch(8, 12),
      UpstreamError.unsupportedInput("Cohere does not accept token ids")
    ]
    for (const error of errors) {
      const json = JSON.parse(JSON.stringify(Schema.encodeSync(codec)(error)))
      assert.deepStrictEqual(Schema.decodeUnknownSync(codec)(json).reason, error.reason)
      assert.isAbove(error.message.length, 0)
    }
    assert.strictEqual(errors[0]!.message, `Provider "upstream" is rate limiting requests; retry after 1s`)
  })

  it("reads a status answer's body when it is one of the known shapes", () => {
    const parsed = UpstreamAnswer.fromResponse({ status: 400, headers: {}, body: `{"message":"bad input_type"}` }, 0)
    assert.strictEqual(parsed.reason._tag, "InvalidRequest")
    assert.strictEqual((parsed.reason as UpstreamError.InvalidRequest).provider_message, "bad input_type")
    const quota = UpstreamAnswer.fromResponse({
      status: 429,
      headers: {},
      body: JSON.stringify({ error: { code: 429, status: "RESOURCE_EXHAUSTED", message: "billing account has no credit" } })
    }, 0)
    assert.strictEqual(quota.reason._tag, "QuotaExhausted")
    assert.strictEqual(UpstreamAnswer.fromResponse({ status: 429, headers: { "retry-after-ms": "1500" }, body: "" }, 0).failureClass, "next_provider")
  })
})

describe("UpstreamError.toApiError", () => {
  it.effect("answers with the reason's status and never leaks credentials", () =>
    Effect.gen(function*() {
      const auth = toApi(yield* fromStatus(401, `{"error":{"message":"Incorrect API key provided: sk-proj-abcdef123456"}}`))
      assert.strictEqual(auth._tag, "BadGateway")
      assert.notInclude(JSON.stringify(auth), "sk-proj")
      assert.isUndefined(auth.metadata?.raw)
      const bad = toApi(
        yield* fromStatus(400, `{"error":{"message":"invalid input for key sk-live-1234567890abc and Bearer abc.def"}}`)
      )
      assert.strictEqual(bad._tag, "BadRequest")
      assert.notInclude(bad.message, "sk-live-1234567890abc")
      assert.notInclude(bad.message, "abc.def")
      assert.deepInclude(bad.metadata, { provider_name: "openai", reason: "InvalidRequest", upstream_status: 400 })
      const limited = toApi(yield* fromStatus(429, "", { "retry-after": "2" }))
      assert.strictEqual(limited._tag, "TooManyRequests")
      assert.strictEqual(limited.metadata?.retry_after_ms, 2000)
      assert.strictEqual(toApi(yield* fromStatus(524)).metadata?.reason, "Timeout")
      assert.strictEqual(toApi(yield* fromStatus(529))._tag, "UpstreamOverloaded")
    }))

  it("redacts anything shaped like a credential", () => {
    fc.assert(fc.property(fc.stringMatching(/^[A-Za-z0-9]{12,30}$/), (secret) => {
      const text = `failed: api_key=${secret} auth Bearer ${secret} key sk-${secret} AIza${secret}`
      const refused = UpstreamAnswer.fromResponse({ status: 400, headers: {}, body: JSON.stringify({ error: { message: text } }) }, 0)
      const answer = toApi(refused)
      return !answer.message.includes(secret) && !JSON.stringify(answer.metadata).includes(secret)
    }))
  })
})
