import { assert, describe, it } from "vitest"
import * as EndpointPrice from "../src/EndpointPrice.ts"

const pricing = { prompt: "0", completion: "0", request: "0", image: "0", audio: "0" }

describe("EndpointPrice.describe", () => {
  it("prices an embeddings endpoint per million tokens, exactly", () => {
    assert.deepStrictEqual(EndpointPrice.describe({ task: "embeddings", pricing: { ...pricing, prompt: "0.0000004" } }), ["$0.4 / M tokens"])
  })

  it("prices a rerank endpoint billed by search per 1,000 searches, not $0", () => {
    assert.deepStrictEqual(EndpointPrice.describe({ task: "rerank", pricing: { ...pricing, search: "2.000" } }), ["$2 / 1,000 searches"])
  })

  it("prices a rerank endpoint billed by token per million tokens", () => {
    assert.deepStrictEqual(EndpointPrice.describe({ task: "rerank", pricing: { ...pricing, prompt: "0.00000001", search: "0" } }), ["$0.01 / M tokens"])
  })

  it("adds a price per request, and says free only when nothing is charged", () => {
    assert.deepStrictEqual(
      EndpointPrice.describe({ task: "embeddings", pricing: { ...pricing, prompt: "0.00000002", request: "0.0010" } }),
      ["$0.02 / M tokens", "$0.001 / request"]
    )
    assert.deepStrictEqual(EndpointPrice.describe({ task: "rerank", pricing: { ...pricing, search: "0" } }), ["free"])
  })
})
