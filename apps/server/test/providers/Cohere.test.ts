import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as AdapterFixture from "../support/AdapterFixture.ts"
import * as Cohere from "../../src/providers/Cohere.ts"
import * as VectorEncoding from "../../src/providers/VectorEncoding.ts"
import {
  audio,
  describeFailureModes,
  fixture,
  fixtureJson,
  image,
  items,
  lastBody,
  overHttp,
  pngDataUrl,
  reasonOf,
  request,
  text,
  texts,
  tokens
} from "./ProviderHarness.ts"

const key = "co-fake"

const subject = { start: FakeCohere.start, make: Cohere.make, apiKey: key }

const cohere = AdapterFixture.make(subject)

describe("Cohere", () => {
  it.live("posts texts to /v2/embed with input_type, float embedding type and output_dimension", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* cohere()
      const result = yield* embed(
        request("embed-v4.0", texts("hello there", "goodbye"), { inputType: "query", dimensions: 256 })
      )
      const sent = server.requests[0]!
      assert.strictEqual(sent.path, "/v2/embed")
      assert.strictEqual(sent.headers.authorization, `Bearer ${key}`)
      assert.deepStrictEqual(sent.body, {
        model: "embed-v4.0",
        input_type: "search_query",
        embedding_types: ["float"],
        texts: ["hello there", "goodbye"],
        output_dimension: 256
      })
      assert.strictEqual(result.embeddings.length, 2)
      assert.deepStrictEqual(
        result.embeddings[1]!.embedding,
        FakeUpstream.vectorFor("embed-v4.0|search_query|goodbye", 256)
      )
      assert.strictEqual(result.promptTokens, 3)
      assert.isString(result.upstreamId)
    }).pipe(overHttp))

  it.live("encodes to base64 itself, exactly", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* cohere()
      const result = yield* embed(request("embed-english-v3.0", texts("x"), { encodingFormat: "base64" }))
      assert.deepStrictEqual(lastBody(server).embedding_types, ["float"])
      const vector = FakeUpstream.vectorFor("embed-english-v3.0|search_document|x", 1024)
      assert.strictEqual(result.embeddings[0]!.embedding, FakeUpstream.float32Base64(vector))
      assert.deepStrictEqual(VectorEncoding.fromBase64(result.embeddings[0]!.embedding as string), vector)
    }).pipe(overHttp))

  it.live("sends mixed text and images as inputs and reports image tokens", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* cohere()
      const result = yield* embed(
        request("embed-v4.0", items([text("a red square"), image(pngDataUrl)], [text("just text")]), {
          inputType: "search_query",
          dimensions: 256
        })
      )
      assert.deepStrictEqual(lastBody(server), fixtureJson("cohere/request-multimodal.json"))
      assert.deepStrictEqual(result.modalityTokens, { text_tokens: 5, image_tokens: 1000 })
      assert.strictEqual(result.promptTokens, 1005)
    }).pipe(overHttp))

  it("maps input types, defaulting to search_document", () => {
    assert.strictEqual(Cohere.inputTypeOf(undefined), "search_document")
    assert.strictEqual(Cohere.inputTypeOf("query"), "search_query")
    assert.strictEqual(Cohere.inputTypeOf("retrieval.query"), "search_query")
    assert.strictEqual(Cohere.inputTypeOf("passage"), "search_document")
    assert.strictEqual(Cohere.inputTypeOf("classification"), "classification")
    assert.strictEqual(Cohere.inputTypeOf("separation"), "clustering")
    assert.strictEqual(Cohere.inputTypeOf("something else"), "search_document")
  })

  it.effect("refuses token ids, http image URLs and audio", () =>
    Effect.gen(function*() {
      const ids = yield* reasonOf(Cohere.requestBody(request("embed-v4.0", tokens([1]))))
      assert.deepStrictEqual(ids, { _tag: "UnsupportedInput", detail: "Cohere does not accept token ids" })
      const url = yield* reasonOf(Cohere.requestBody(request("embed-v4.0", items([image("https://example.com/a.png")]))))
      assert.deepStrictEqual(url, { _tag: "UnsupportedInput", detail: "input 0: Cohere takes images only as base64 data: URLs" })
      const sound = yield* reasonOf(Cohere.requestBody(request("embed-v4.0", items([text("a")], [audio("AAAA", "wav")]))))
      assert.deepStrictEqual(sound, { _tag: "UnsupportedInput", detail: "input 1: Cohere embeds text and images, not audio" })
    }))

  it.live("parses a recorded embed-v4 answer", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* cohere()
      server.setBehaviour({ _tag: "Status", status: 200, body: fixture("cohere/embed-v4-texts.json") })
      const result = yield* embed(request("embed-v4.0", texts("hello", "goodbye")))
      assert.deepStrictEqual(result.embeddings[0]!.embedding, [0.016296387, -0.008354187, -0.04699707, -0.07104492])
      assert.strictEqual(result.promptTokens, 2)
      assert.strictEqual(result.upstreamId, "5807ee2e-0cda-445a-9ec8-864c60a06606")
    }).pipe(overHttp))

  it.live("a Cohere error body gives its message", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* cohere()
      server.setBehaviour({ _tag: "Status", status: 400, body: fixture("cohere/error-400.json") })
      const reason = yield* reasonOf(embed(request("embed-v4.0", texts("x"))))
      assert.strictEqual(reason._tag, "InvalidRequest")
      if (reason._tag !== "InvalidRequest") return
      assert.strictEqual(reason.provider_message, "invalid request: valid input_type must be provided with the provided model")
    }).pipe(overHttp))
})

describeFailureModes({
  ...subject,
  name: "Cohere",
  model: "embed-english-light-v3.0",
  input: texts("one two", "three")
})
