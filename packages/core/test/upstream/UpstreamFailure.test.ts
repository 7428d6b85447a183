import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import * as ApiError from "../../src/errors/ApiError.ts"
import type { UpstreamErrorReason } from "../../src/providers/EmbeddingProvider.ts"
import { FailureClass } from "../../src/upstream/FailureClass.ts"
import * as UpstreamFailure from "../../src/upstream/UpstreamFailure.ts"

const context = { provider: "openai", endpoint: "openai/default@openai/text-embedding-3-small" }
const wireStatuses = Object.keys(ApiError.wire).map(Number)

const fromStatus = (status: number, body = "", headers: UpstreamFailure.Headers = {}) =>
  UpstreamFailure.fromResponse({ status, headers, body }, context)

// Adapters report failures as EmbeddingProvider's reasons; they must map without conversion.
export const adapterReasonsFit = (reason: UpstreamErrorReason): UpstreamFailure.AttemptFailure => reason

describe("UpstreamFailure policy", () => {
  it("gives every reason a status, a fallback class and a health verdict", () => {
    assert.deepStrictEqual([...UpstreamFailure.reasonTags].sort(), Object.keys(UpstreamFailure.policy).sort())
    assert.isAtLeast(UpstreamFailure.reasonTags.length, 15)
    for (const tag of UpstreamFailure.reasonTags) {
      const entry = UpstreamFailure.policy[tag]
      assert.isDefined(entry, tag)
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
        assert.strictEqual(UpstreamFailure.toApiError(failure)._tag, ApiError.fromStatus(failure.status, "")._tag)
      }
    }))
})

describe("UpstreamFailure.fromResponse", () => {
  const cases: ReadonlyArray<readonly [status: number, body: string, reason: UpstreamFailure.ReasonTag, status: number, cls: FailureClass]> = [
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
      assert.strictEqual((seconds.reason as UpstreamFailure.RateLimited).retry_after_ms, 7000)
      const ms = yield* fromStatus(429, "", { "retry-after-ms": "250", "retry-after": "9" })
      assert.strictEqual((ms.reason as UpstreamFailure.RateLimited).retry_after_ms, 250)
      const date = yield* fromStatus(503, "", { "retry-after": "Wed, 01 Jan 2025 00:00:30 GMT" })
      assert.strictEqual((date.reason as UpstreamFailure.Unavailable).retry_after_ms, 30_000)
      const reset = yield* fromStatus(429, "", { "x-ratelimit-reset-requests": "1m30s" })
      assert.strictEqual((reset.reason as UpstreamFailure.RateLimited).retry_after_ms, 90_000)
      assert.include(seconds.message, "retry after 7s")
    }))

  it("parses rate-limit headers", () => {
    assert.deepStrictEqual(UpstreamFailure.parseRateLimitHeaders({
      "x-ratelimit-limit-requests": "3000",
      "x-ratelimit-remaining-requests": "2999",
      "x-ratelimit-reset-requests": "20ms",
      "x-ratelimit-reset-tokens": "6m0s"
    }, 0), { limit_requests: "3000", remaining_requests: 2999, reset_requests_ms: 20, reset_tokens_ms: 360_000 })
    assert.deepStrictEqual(UpstreamFailure.parseRateLimitHeaders({ "retry-after": "soon" }, 0), {})
  })
})

describe("UpstreamFailure.fromAttempt", () => {
  it("maps every adapter report", () => {
    const reasons: ReadonlyArray<readonly [UpstreamErrorReason, UpstreamFailure.ReasonTag]> = [
      [{ _tag: "HttpStatus", status: 429, body: "", retryAfterMs: 1500 }, "RateLimited"],
      [{ _tag: "HttpStatus", status: 400, body: `{"message":"bad input_type"}` }, "InvalidRequest"],
      [{ _tag: "HttpStatus", status: 429, body: "", code: "RESOURCE_EXHAUSTED", message: "billing account has no credit" }, "QuotaExhausted"],
      [{ _tag: "Timeout", timeoutMs: 30_000 }, "Timeout"],
      [{ _tag: "Unreachable", detail: "ECONNREFUSED" }, "Unreachable"],
      [{ _tag: "ConnectionReset", detail: "socket hang up" }, "ConnectionLost"],
      [{ _tag: "InvalidResponse", detail: "expected 2 vectors, got 1" }, "InvalidResponse"],
      [{ _tag: "WidthMismatch", expected: 256, got: 1536 }, "InvalidResponse"],
      [{ _tag: "UnsupportedInput", detail: "token ids" }, "UnsupportedInput"]
    ]
    for (const [report, tag] of reasons) {
      const failure = UpstreamFailure.fromAttempt(report, context)
      assert.strictEqual(failure.reason._tag, tag, report._tag)
    }
    const width = UpstreamFailure.fromAttempt({ _tag: "WidthMismatch", expected: 256, got: 1536 }, context)
    assert.include(width.message, "expected vectors of 256 dimensions, got 1536")
    assert.strictEqual(width.status, 502)
    const parsed = UpstreamFailure.fromAttempt({ _tag: "HttpStatus", status: 400, body: `{"message":"bad input_type"}` }, context)
    assert.strictEqual((parsed.reason as UpstreamFailure.InvalidRequest).provider_message, "bad input_type")
    assert.strictEqual(
      UpstreamFailure.fromAttempt({ _tag: "HttpStatus", status: 429, body: "", retryAfterMs: 1500 }, context).failureClass,
      "next_provider"
    )
  })
})

describe("UpstreamFailure.toApiError", () => {
  it.effect("answers with the reason's status and never leaks credentials", () =>
    Effect.gen(function*() {
      const auth = UpstreamFailure.toApiError(yield* fromStatus(401, `{"error":{"message":"Incorrect API key provided: sk-proj-abcdef123456"}}`))
      assert.strictEqual(auth._tag, "BadGateway")
      assert.notInclude(JSON.stringify(auth), "sk-proj")
      assert.isUndefined(auth.metadata?.raw)
      const bad = UpstreamFailure.toApiError(
        yield* fromStatus(400, `{"error":{"message":"invalid input for key sk-live-1234567890abc and Bearer abc.def"}}`)
      )
      assert.strictEqual(bad._tag, "BadRequest")
      assert.notInclude(bad.message, "sk-live-1234567890abc")
      assert.notInclude(bad.message, "abc.def")
      assert.deepInclude(bad.metadata, { provider_name: "openai", reason: "InvalidRequest", upstream_status: 400 })
      const limited = UpstreamFailure.toApiError(yield* fromStatus(429, "", { "retry-after": "2" }))
      assert.strictEqual(limited._tag, "TooManyRequests")
      assert.strictEqual(limited.metadata?.retry_after_ms, 2000)
      assert.strictEqual(UpstreamFailure.toApiError(yield* fromStatus(524)).metadata?.reason, "Timeout")
      assert.strictEqual(UpstreamFailure.toApiError(yield* fromStatus(529))._tag, "UpstreamOverloaded")
    }))

  it("redacts anything shaped like a credential", () => {
    fc.assert(fc.property(fc.stringMatching(/^[A-Za-z0-9]{12,30}$/), (secret) => {
      const text = `failed: api_key=${secret} auth Bearer ${secret} key sk-${secret} AIza${secret}`
      return !UpstreamFailure.safeMessage(text).includes(secret)
    }))
  })
})
