import { assert, describe, it } from "@effect/vitest"
import * as UpstreamAnswer from "@switchyard/core/upstream/UpstreamAnswer"
import { Headers } from "effect/http"
import * as UpstreamHttp from "../../src/providers/UpstreamHttp.ts"
import { fixture } from "./ProviderHarness.ts"

const now = Date.parse("2025-06-01T12:00:00Z")

const retryAfter = (headers: Record<string, string>) => UpstreamAnswer.retryAfterMs(Headers.fromInput(headers), now)

// The fixtures are the providers' recorded error bodies; core's one parser reads every shape.
const parse = UpstreamAnswer.parseErrorBody

describe("UpstreamHttp", () => {
  it("reads Retry-After as seconds, an HTTP date, or retry-after-ms", () => {
    assert.strictEqual(retryAfter({ "retry-after": "120" }), 120_000)
    assert.strictEqual(retryAfter({ "retry-after": "1.5" }), 1_500)
    assert.strictEqual(retryAfter({ "retry-after": "Sun, 01 Jun 2025 12:00:30 GMT" }), 30_000)
    assert.strictEqual(retryAfter({ "retry-after": "Sun, 01 Jun 2025 11:00:00 GMT" }), 0)
    assert.strictEqual(retryAfter({ "retry-after-ms": "250", "retry-after": "9" }), 250)
    assert.isUndefined(retryAfter({ "retry-after": "soon" }))
    assert.isUndefined(retryAfter({}))
  })

  it("joins a base URL and a path with one slash", () => {
    assert.strictEqual(UpstreamHttp.joinUrl("https://api.example.com/v1/", "/embeddings"), "https://api.example.com/v1/embeddings")
    assert.strictEqual(UpstreamHttp.joinUrl("https://api.example.com/v1", "/embeddings"), "https://api.example.com/v1/embeddings")
  })
})

describe("UpstreamAnswer.parseErrorBody", () => {
  it("reads OpenAI-style bodies", () => {
    assert.deepStrictEqual(parse(fixture("openai/error-invalid-api-key.json")), {
      message: "Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.",
      code: "invalid_api_key"
    })
    assert.deepStrictEqual(parse(JSON.stringify({ error: "overloaded" })), { message: "overloaded" })
    assert.deepStrictEqual(
      parse(JSON.stringify({ error: { message: "slow down", type: "requests", code: null } })),
      { message: "slow down", code: "requests" }
    )
  })

  it("reads Mistral's message bodies, whose message may be structured", () => {
    const details = parse(fixture("mistral/error-422.json"))
    assert.strictEqual(details.code, "invalid_request_message_error")
    assert.include(details.message, "Field required")
  })

  it("reads FastAPI detail bodies (Voyage, Jina)", () => {
    assert.deepStrictEqual(parse(fixture("voyage/error-401.json")), { message: "Provided API key is invalid." })
    assert.include(parse(fixture("jina/error-422.json")).message, "task must be one of")
    assert.deepStrictEqual(parse(JSON.stringify({ detail: { error: "model not found" } })), { message: "model not found" })
  })

  it("reads Google bodies with their reason and retry delay", () => {
    assert.deepStrictEqual(parse(fixture("gemini/error-429.json")), {
      message: "Resource has been exhausted (e.g. check quota).",
      code: "RESOURCE_EXHAUSTED",
      retryAfterMs: 41_000
    })
  })

  it("gives nothing for bodies it cannot read", () => {
    assert.deepStrictEqual(parse("<html>502 Bad Gateway</html>"), {})
    assert.deepStrictEqual(parse(""), {})
    assert.deepStrictEqual(parse(JSON.stringify({ unrelated: 1 })), {})
    assert.deepStrictEqual(parse(fixture("cohere/error-400.json")), {
      message: "invalid request: valid input_type must be provided with the provided model"
    })
  })
})
