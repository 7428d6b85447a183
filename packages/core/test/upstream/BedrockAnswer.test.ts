import { assert, describe, it } from "@effect/vitest"
import * as BedrockAnswer from "../../src/upstream/BedrockAnswer.ts"
import * as UpstreamError from "../../src/upstream/UpstreamError.ts"

const answer = (status: number, type: string | undefined, message: string) =>
  BedrockAnswer.fromResponse({
    status,
    headers: type === undefined ? {} : { "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
    body: JSON.stringify({ message })
  }, 0).reason

describe("BedrockAnswer", () => {
  it("reads the error type, not only the status", () => {
    assert.strictEqual(answer(429, "ThrottlingException", "Too many requests, please wait before trying again.")._tag, "RateLimited")
    // Bedrock answers 429 for a model still loading: unavailable, not a rate limit.
    assert.strictEqual(answer(429, "ModelNotReadyException", "Model is not ready for inference.")._tag, "Unavailable")
    // A 400 for the account's token quota: rate limited, not a bad request.
    assert.strictEqual(answer(400, "ServiceQuotaExceededException", "Your request exceeds the service quota for your account.")._tag, "RateLimited")
    assert.strictEqual(answer(403, "AccessDeniedException", "You don't have access to the model with the specified model ID.")._tag, "AuthFailed")
    assert.strictEqual(answer(403, "InvalidSignatureException", "The request signature we calculated does not match")._tag, "AuthFailed")
    assert.strictEqual(answer(408, "ModelTimeoutException", "Model has timed out in processing the request.")._tag, "Timeout")
    assert.strictEqual(answer(424, "ModelErrorException", "The model failed")._tag, "ServerError")
    assert.strictEqual(answer(400, "ValidationException", "The provided model identifier is invalid.")._tag, "ModelNotFound")
  })

  it("keeps a malformed request a stop, with Bedrock's message and type", () => {
    const reason = answer(400, "ValidationException", "Malformed input request: #: extraneous key [foo] is not permitted")
    assert.deepStrictEqual({ ...reason }, {
      _tag: "InvalidRequest",
      upstream_status: 400,
      provider_message: "Malformed input request: #: extraneous key [foo] is not permitted",
      provider_code: "ValidationException"
    })
    assert.strictEqual(UpstreamError.failureClassOf(reason), "stop")
    // A limit of the model moves on to the next provider.
    assert.strictEqual(UpstreamError.failureClassOf(answer(400, "ValidationException", "Input is too long for requested model.")), "next_provider")
  })

  it("reads __type from the body when the header is missing, and keeps the status of an unknown type", () => {
    assert.strictEqual(BedrockAnswer.errorTypeOf({}, "{\"__type\":\"com.amazon.coral.service#ThrottlingException\"}"), "ThrottlingException")
    assert.strictEqual(answer(503, undefined, "busy")._tag, "Unavailable")
    assert.strictEqual(answer(500, "SomethingNewException", "?")._tag, "ServerError")
  })
})
