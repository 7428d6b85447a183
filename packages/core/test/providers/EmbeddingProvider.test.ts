import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as EmbeddingProvider from "../../src/providers/EmbeddingProvider.ts"

const reasons: ReadonlyArray<EmbeddingProvider.UpstreamErrorReason> = [
  EmbeddingProvider.HttpStatus.make({ status: 429, body: "{}", message: "slow down", code: "rate_limit", retryAfterMs: 1000 }),
  EmbeddingProvider.Timeout.make({ timeoutMs: 300 }),
  EmbeddingProvider.Unreachable.make({ detail: "connect ECONNREFUSED 127.0.0.1:1" }),
  EmbeddingProvider.ConnectionReset.make({ detail: "other side closed" }),
  EmbeddingProvider.InvalidResponse.make({ detail: "expected 2 vectors, got 1" }),
  EmbeddingProvider.WidthMismatch.make({ expected: 8, got: 12 }),
  EmbeddingProvider.UnsupportedInput.make({ detail: "Cohere does not accept token ids" })
]

describe("EmbeddingProvider", () => {
  it("counts the vectors an input asks for", () => {
    assert.strictEqual(EmbeddingProvider.inputCount({ _tag: "Texts", texts: ["a", "b"] }), 2)
    assert.strictEqual(EmbeddingProvider.inputCount({ _tag: "Tokens", tokens: [[1], [2], [3]] }), 3)
    assert.strictEqual(EmbeddingProvider.inputCount({ _tag: "Multimodal", items: [[{ type: "text", text: "a" }]] }), 1)
  })

  it("every reason is plain data that survives encoding and has a message", () => {
    const codec = Schema.toCodecJson(EmbeddingProvider.UpstreamError)
    for (const reason of reasons) {
      const error = new EmbeddingProvider.UpstreamError({ adapter: "openai", reason })
      const json = JSON.parse(JSON.stringify(Schema.encodeSync(codec)(error)))
      assert.deepStrictEqual(Schema.decodeUnknownSync(codec)(json).reason, reason)
      assert.include(error.message, "openai: ")
    }
    assert.strictEqual(
      new EmbeddingProvider.UpstreamError({ adapter: "gemini", reason: reasons[0]! }).message,
      "gemini: upstream answered 429: slow down"
    )
  })

  it("decodes the public API's content parts as given", () => {
    const parts: ReadonlyArray<unknown> = [
      { type: "text", text: "a" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
      { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } },
      { type: "input_video", input_video: { data: "AAAA" } },
      { type: "input_file", input_file: { data: "AAAA", format: "pdf" } }
    ]
    assert.deepStrictEqual(Schema.decodeUnknownSync(Schema.Array(EmbeddingProvider.ContentPart))(parts), parts)
  })
})
