import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as EmbeddingProvider from "../../src/providers/EmbeddingProvider.ts"

describe("EmbeddingProvider", () => {
  it("counts the vectors an input asks for", () => {
    assert.strictEqual(EmbeddingProvider.inputCount({ _tag: "Texts", texts: ["a", "b"] }), 2)
    assert.strictEqual(EmbeddingProvider.inputCount({ _tag: "Tokens", tokens: [[1], [2], [3]] }), 3)
    assert.strictEqual(EmbeddingProvider.inputCount({ _tag: "Multimodal", items: [[{ type: "text", text: "a" }]] }), 1)
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
