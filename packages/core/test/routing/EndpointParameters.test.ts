import { assert, describe, it } from "@effect/vitest"
import * as EndpointParameters from "../../src/routing/EndpointParameters.ts"

describe("EndpointParameters", () => {
  const openai = { adapter: "openai" as const, dialect: "openai" as const }
  const common = { model: "acme/embed", upstream_model: "embed", max_input_tokens: 512 }
  const flexible = { ...common, supported_parameters: ["dimensions", "input_type", "user", "encoding_format"], dimensions: 1536 }
  const fixed = { ...common, supported_parameters: ["encoding_format"], dimensions: 768 }
  const matryoshka = { ...fixed, matryoshka: true as const }
  const request = { dimensions: 256, input_type: "search_query", user: "u-1" }

  it("sends an endpoint only the parameters it supports, and asks for the width it can give", () => {
    const asked = EndpointParameters.forEndpoint(request, openai, flexible)
    assert.deepStrictEqual([asked.dimensions, asked.inputType, asked.user, asked.width, asked.answerWidth], [256, "search_query", "u-1", 256, 256])
    const own = EndpointParameters.forEndpoint(request, openai, fixed)
    assert.deepStrictEqual([own.dimensions, own.inputType, own.width, own.answerWidth, own.widthBy], [undefined, undefined, 768, 768, "provider"])
    assert.strictEqual(EndpointParameters.forEndpoint({}, openai, flexible).width, 1536)
  })

  it("a Matryoshka model without native dimensions answers its full width, which the gateway cuts", () => {
    const asked = EndpointParameters.forEndpoint(request, openai, matryoshka)
    assert.deepStrictEqual([asked.dimensions, asked.width, asked.answerWidth, asked.widthBy, asked.plain], [undefined, 768, 256, "gateway", false])
    assert.deepStrictEqual(EndpointParameters.ignored(["dimensions", "user"], matryoshka), ["user"])
    assert.deepStrictEqual(EndpointParameters.ignored(["dimensions", "user"], fixed), ["dimensions", "user"])
    assert.isTrue(EndpointParameters.offersWidth(matryoshka, 300))
    assert.isFalse(EndpointParameters.offersWidth(matryoshka, 769))
    assert.isFalse(EndpointParameters.offersWidth({ ...matryoshka, matryoshka: [256, 512] }, 300))
    assert.isTrue(EndpointParameters.offersWidth(fixed, 300))
  })

  it("names the sent parameters an endpoint lacks natively, never what the gateway makes itself", () => {
    assert.deepStrictEqual(EndpointParameters.missing(["dimensions", "encoding_format", "user", "output_dtype", "truncate"], fixed), ["dimensions", "user"])
    assert.deepStrictEqual(EndpointParameters.missing(["dimensions", "encoding_format"], flexible), [])
  })

  it("asks the provider for a type it makes natively, unless the gateway needs its floats", () => {
    const cohere = { adapter: "cohere" as const }
    const native = { ...flexible, output_dtypes: ["int8" as const, "binary" as const] }
    assert.deepStrictEqual(
      [EndpointParameters.forEndpoint({ output_dtype: "int8" }, cohere, native).outputDtype, EndpointParameters.forEndpoint({ output_dtype: "int8" }, cohere, native).dtypeBy],
      ["int8", "provider"]
    )
    const uint8 = EndpointParameters.forEndpoint({ output_dtype: "uint8" }, cohere, native)
    assert.deepStrictEqual([uint8.outputDtype, uint8.dtypeBy], [undefined, "gateway"])
    const cut = EndpointParameters.forEndpoint({ output_dtype: "int8", dimensions: 256 }, cohere, { ...native, supported_parameters: [], matryoshka: true })
    assert.deepStrictEqual([cut.outputDtype, cut.dtypeBy, cut.widthBy], [undefined, "gateway", "gateway"])
    const chunked = EndpointParameters.forEndpoint({ output_dtype: "int8", truncate: "chunk" }, cohere, native)
    assert.deepStrictEqual([chunked.outputDtype, chunked.dtypeBy], [undefined, "gateway"])
  })

  it("says what happens to a long input: the provider's own truncation where it has one, else the gateway's count", () => {
    const long = (truncate: "none" | "start" | "end" | "chunk", provider: Parameters<typeof EndpointParameters.longInputs>[1], endpoint = common) =>
      EndpointParameters.longInputs(truncate, provider, endpoint)
    const ada = { ...common, supported_parameters: [], model: "openai/text-embedding-3-small" }
    assert.deepInclude(long("none", openai, ada), { native: "none", gateway: "refuse", counter: "cl100k_base" })
    assert.deepInclude(long("end", openai, ada), { native: "none", gateway: "end" })
    assert.deepInclude(long("none", { adapter: "cohere" }), { native: "none", gateway: undefined, counter: "bytes" })
    assert.deepInclude(long("start", { adapter: "cohere" }), { native: "start", gateway: undefined })
    assert.deepInclude(long("start", { adapter: "voyage" }), { native: "none", gateway: "start" })
    assert.deepInclude(long("end", { adapter: "voyage" }), { native: "end", gateway: undefined })
    assert.deepInclude(long("chunk", { adapter: "tei" }), { native: "none", gateway: "chunk", counter: "server" })
    assert.deepInclude(long("none", { adapter: "gemini" }), { native: undefined, gateway: undefined })
    assert.deepInclude(long("chunk", { adapter: "vertex" }, { ...common, max_input_tokens: undefined as unknown as number }), { native: "none", gateway: undefined })
    assert.isTrue(EndpointParameters.forEndpoint({}, openai, ada).plain)
    assert.isFalse(EndpointParameters.forEndpoint({ truncate: "chunk" }, openai, ada).plain)
  })

  it("the generation record's facts say who made the width, the type and the truncation", () => {
    const facts = EndpointParameters.factsOf(EndpointParameters.forEndpoint({ dimensions: 256, output_dtype: "binary", truncate: "end" }, { adapter: "voyage" }, matryoshka))
    assert.deepStrictEqual(facts, { dimensions: 256, dimensions_by: "gateway", dtype: "binary", dtype_by: "gateway", truncate: "end", truncate_by: "provider" })
  })
})
