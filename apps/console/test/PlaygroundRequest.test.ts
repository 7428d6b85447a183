import { Schema } from "effect"
import { EmbeddingRequest } from "@switchyard/core/schema/EmbeddingRequest"
import { assert, describe, it } from "vitest"
import { RerankRequest } from "@switchyard/core/schema/RerankRequest"
import { emptyForm, toRequest, toRerankRequest } from "../src/PlaygroundRequest.ts"

const encode = Schema.encodeUnknownSync(EmbeddingRequest)

describe("PlaygroundRequest.toRequest", () => {
  it("sends a single line as a string and leaves the gateway's defaults out", () => {
    const request = toRequest({ ...emptyForm, model: "acme/embed", inputs: "hello\n\n" })
    assert.deepStrictEqual(request, { model: "acme/embed", input: "hello" })
    encode(request)
  })

  it("sends several lines as an array and every preference set in the form", () => {
    const request = toRequest({
      ...emptyForm,
      model: " acme/embed ",
      inputs: "one\ntwo",
      dimensions: "8",
      order: "gamma, beta",
      only: "beta gamma",
      ignore: "alpha",
      quantizations: "fp16,bf16",
      sort: "latency",
      maxPromptPrice: "0.05",
      allowFallbacks: false,
      zdr: true,
      denyDataCollection: true
    })
    assert.deepStrictEqual(request, {
      model: "acme/embed",
      input: ["one", "two"],
      dimensions: 8,
      provider: {
        order: ["gamma", "beta"],
        only: ["beta", "gamma"],
        ignore: ["alpha"],
        quantizations: ["fp16", "bf16"],
        sort: "latency",
        max_price: { prompt: "0.05" },
        allow_fallbacks: false,
        zdr: true,
        data_collection: "deny"
      }
    })
    encode(request)
  })
})

describe("PlaygroundRequest.toRerankRequest", () => {
  it("sends the query, one document per line and the same preferences", () => {
    const request = toRerankRequest({
      ...emptyForm,
      task: "rerank",
      model: " acme/rerank ",
      query: "rivers",
      inputs: "one\n\ntwo",
      only: "beta",
      zdr: true
    })
    assert.deepStrictEqual(request, {
      model: "acme/rerank",
      query: "rivers",
      documents: ["one", "two"],
      return_documents: true,
      provider: { only: ["beta"], zdr: true }
    })
    Schema.encodeUnknownSync(RerankRequest)(request)
  })
})
