import { assert, describe, it } from "@effect/vitest"
import * as EndpointParameters from "../../src/routing/EndpointParameters.ts"

describe("EndpointParameters", () => {
  const flexible = { supported_parameters: ["dimensions", "input_type", "user", "encoding_format"], dimensions: 1536 }
  const fixed = { supported_parameters: ["encoding_format"], dimensions: 768 }
  const request = { dimensions: 256, input_type: "search_query", user: "u-1" }

  it("sends an endpoint only the parameters it supports, and asks for the width it can give", () => {
    assert.deepStrictEqual(EndpointParameters.forEndpoint(request, flexible), { dimensions: 256, inputType: "search_query", user: "u-1", width: 256 })
    assert.deepStrictEqual(EndpointParameters.forEndpoint(request, fixed), { width: 768 })
    assert.deepStrictEqual(EndpointParameters.forEndpoint({}, flexible), { width: 1536 })
  })

  it("names the sent parameters an endpoint lacks, never encoding_format", () => {
    assert.deepStrictEqual(EndpointParameters.missing(["dimensions", "encoding_format", "user"], fixed), ["dimensions", "user"])
    assert.deepStrictEqual(EndpointParameters.missing(["dimensions", "encoding_format"], flexible), [])
  })
})
