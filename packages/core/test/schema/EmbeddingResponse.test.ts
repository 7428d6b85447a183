import { assert, describe, it } from "@effect/vitest"
import { CreateEmbeddingsResponseBody$inboundSchema } from "@openrouter/sdk/models/operations"
import { Exit, Schema } from "effect"
import * as fc from "fast-check"
import { EmbeddingModelList, EmbeddingResponse, ListModelsQuery } from "../../src/schema/EmbeddingResponse.ts"

const finite = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1, max: 1 })
const count = fc.nat({ max: 1_000_000 })

const response = fc.record({
  object: fc.constant("list" as const),
  data: fc.array(
    fc.record({
      object: fc.constant("embedding" as const),
      embedding: fc.oneof(fc.array(finite, { maxLength: 8 }), fc.base64String()),
      index: fc.nat({ max: 100 })
    }, { requiredKeys: ["object", "embedding"] }),
    { maxLength: 4 }
  ),
  model: fc.string(),
  id: fc.string(),
  usage: fc.record({
    prompt_tokens: count,
    total_tokens: count,
    cost: fc.double({ min: 0, max: 10, noNaN: true }),
    cost_details: fc.option(fc.record({
      upstream_inference_prompt_cost: fc.double({ min: 0, max: 10, noNaN: true }),
      upstream_inference_completions_cost: fc.constant(0),
      upstream_inference_cost: fc.option(fc.double({ min: 0, max: 10, noNaN: true }))
    }, { requiredKeys: ["upstream_inference_prompt_cost", "upstream_inference_completions_cost"] })),
    is_byok: fc.boolean(),
    prompt_tokens_details: fc.record({ text_tokens: count, image_tokens: count }, { requiredKeys: [] })
  }, { requiredKeys: ["prompt_tokens", "total_tokens"] })
}, { requiredKeys: ["object", "data", "model"] })

describe("EmbeddingResponse", () => {
  it("encodes every response into a body the official SDK accepts", () => {
    fc.assert(fc.property(response, (r) => {
      const body = JSON.parse(JSON.stringify(Schema.encodeSync(EmbeddingResponse)(r)))
      return CreateEmbeddingsResponseBody$inboundSchema.safeParse(body).success
    }))
  })

  it("refuses a vector with a non-finite number", () => {
    const bad = { object: "list", model: "m", data: [{ object: "embedding", embedding: [Number.NaN] }] }
    assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(EmbeddingResponse)(bad)))
  })
})

describe("EmbeddingModelList", () => {
  it("decodes the listing query the SDK sends", () => {
    const Query = Schema.Struct(ListModelsQuery)
    assert.deepStrictEqual(Schema.decodeUnknownSync(Query)({ limit: "500", offset: "0" }), { limit: 500, offset: 0 })
    assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(Query)({ limit: "0" })))
    assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(Query)({ limit: "501" })))
    assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(Query)({ offset: "-1" })))
  })

  it("requires paging fields", () => {
    assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(EmbeddingModelList)({ data: [] })))
    assert.isTrue(Exit.isSuccess(Schema.decodeUnknownExit(EmbeddingModelList)({ data: [], links: { next: null }, total_count: 0 })))
  })
})
