import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVoyage from "../fakes/FakeVoyage.ts"
import * as AdapterFixture from "../support/AdapterFixture.ts"
import * as Voyage from "../../src/providers/Voyage.ts"
import {
  audio,
  describeFailureModes,
  fixture,
  image,
  items,
  lastBody,
  overHttp,
  pngDataUrl,
  reasonOf,
  request,
  text,
  texts,
  tokens,
  video
} from "./ProviderHarness.ts"

const key = "pa-fake"

const subject = { start: FakeVoyage.start, make: Voyage.make, apiKey: key }

const voyage = AdapterFixture.make(subject)

describe("Voyage", () => {
  it.live("posts texts to /embeddings with input_type and output_dimension", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* voyage()
      const result = yield* embed(
        request("voyage-3.5", texts("the query", "x"), { inputType: "search_query", dimensions: 256 })
      )
      const sent = server.requests[0]!
      assert.strictEqual(sent.path, "/v1/embeddings")
      assert.strictEqual(sent.headers.authorization, `Bearer ${key}`)
      assert.deepStrictEqual(sent.body, {
        model: "voyage-3.5",
        input_type: "query",
        output_dimension: 256,
        input: ["the query", "x"]
      })
      assert.deepStrictEqual(result.embeddings[0]!.embedding, FakeUpstream.vectorFor("voyage-3.5|query|the query", 256))
      assert.strictEqual(result.promptTokens, 3)
      assert.isUndefined(result.modalityTokens)
    }).pipe(overHttp))

  it.live("asks for base64 and forwards the strings untouched", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* voyage()
      const result = yield* embed(request("voyage-3.5-lite", texts("x"), { encodingFormat: "base64" }))
      assert.strictEqual(lastBody(server).encoding_format, "base64")
      assert.isUndefined(lastBody(server).input_type)
      assert.strictEqual(
        result.embeddings[0]!.embedding,
        FakeUpstream.float32Base64(FakeUpstream.vectorFor("voyage-3.5-lite||x", 1024))
      )
    }).pipe(overHttp))

  it.live("sends mixed content to /multimodalembeddings with output_encoding", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* voyage()
      const result = yield* embed(
        request(
          "voyage-multimodal-3.5",
          items([text("a red square"), image(pngDataUrl)], [image("https://example.com/cat.jpg")], [video("AAAAIGZ0eXA=", "mp4")]),
          { inputType: "document", encodingFormat: "base64" }
        )
      )
      assert.strictEqual(server.requests[0]!.path, "/v1/multimodalembeddings")
      assert.deepStrictEqual(lastBody(server), {
        model: "voyage-multimodal-3.5",
        input_type: "document",
        inputs: [
          { content: [{ type: "text", text: "a red square" }, { type: "image_base64", image_base64: pngDataUrl }] },
          { content: [{ type: "image_url", image_url: "https://example.com/cat.jpg" }] },
          { content: [{ type: "video_base64", video_base64: "data:video/mp4;base64,AAAAIGZ0eXA=" }] }
        ],
        output_encoding: "base64"
      })
      assert.strictEqual(result.embeddings.length, 3)
      assert.isString(result.embeddings[2]!.embedding)
      assert.strictEqual(result.promptTokens, 3 + Math.ceil((2 * 560 * 400 + 560 * 1200) / 560))
      assert.deepStrictEqual(result.modalityTokens, { text_tokens: 3, image_tokens: 800, video_tokens: 1200 })
    }).pipe(overHttp))

  it.effect("refuses token ids, audio and files", () =>
    Effect.gen(function*() {
      const ids = yield* reasonOf(Voyage.requestOf(request("voyage-3.5", tokens([1, 2]))))
      assert.deepStrictEqual(ids, { _tag: "UnsupportedInput", detail: "Voyage does not accept token ids" })
      const sound = yield* reasonOf(Voyage.requestOf(request("voyage-multimodal-3.5", items([audio("AAAA", "wav")]))))
      assert.deepStrictEqual(sound, {
        _tag: "UnsupportedInput",
        detail: "input 0: Voyage embeds text, images and video, not audio"
      })
      const unknown = yield* reasonOf(Voyage.requestOf(request("voyage-multimodal-3.5", items([video("AAAA")]))))
      assert.strictEqual(unknown._tag, "UnsupportedInput")
    }))

  it.live("parses a recorded multimodal answer with pixel usage", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* voyage()
      server.setBehaviour({ _tag: "Status", status: 200, body: fixture("voyage/multimodal.json") })
      const result = yield* embed(request("voyage-multimodal-3.5", items([text("a")], [image(pngDataUrl)])))
      assert.strictEqual(result.promptTokens, 3712)
      assert.deepStrictEqual(result.modalityTokens, { text_tokens: 9, image_tokens: 3703 })
      assert.deepStrictEqual(result.embeddings[1]!.embedding, [0.01556396484375, 0.0169677734375, -0.0103759765625])
    }).pipe(overHttp))

  it.live("a Voyage error body gives its detail", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* voyage()
      server.setBehaviour({ _tag: "Status", status: 401, body: fixture("voyage/error-401.json") })
      const reason = yield* reasonOf(embed(request("voyage-3.5", texts("x"))))
      // An auth failure never carries the provider's words; a refusal does.
      assert.strictEqual(reason._tag, "AuthFailed")
      server.setBehaviour({ _tag: "Status", status: 400, body: fixture("voyage/error-401.json") })
      const refused = yield* reasonOf(embed(request("voyage-3.5", texts("x"))))
      assert.strictEqual(refused._tag, "InvalidRequest")
      if (refused._tag !== "InvalidRequest") return
      assert.strictEqual(refused.provider_message, "Provided API key is invalid.")
    }).pipe(overHttp))
})

describeFailureModes({
  ...subject,
  name: "Voyage",
  model: "voyage-3.5",
  input: texts("one two", "three")
})
