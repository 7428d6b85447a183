import { assert, describe, it } from "@effect/vitest"
import { builtin } from "@switchyard/core/catalog/BuiltinCatalog"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect } from "effect"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as AdapterFixture from "../support/AdapterFixture.ts"
import * as Adapters from "../../src/providers/Adapters.ts"
import { connectionOf } from "../../src/providers/Adapters.ts"
import * as OpenAiCompatible from "../../src/providers/OpenAiCompatible.ts"
import * as VectorEncoding from "../../src/providers/VectorEncoding.ts"
import {
  audio,
  connection,
  describeFailureModes,
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

const key = "sk-fake"
const model = "text-embedding-3-small"

const openAi = AdapterFixture.make({ start: FakeOpenAi.start, make: OpenAiCompatible.make(), apiKey: key })

describe("OpenAiCompatible", () => {
  it.live("posts the texts with a bearer key and returns vectors in input order", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* openAi()
      const result = yield* embed(
        request(model, texts("hello world", "second input here"), { dimensions: 8, user: "u-1" })
      )
      const sent = server.requests[0]!
      assert.strictEqual(sent.method, "POST")
      assert.strictEqual(sent.path, "/v1/embeddings")
      assert.strictEqual(sent.headers.authorization, `Bearer ${key}`)
      assert.strictEqual(sent.headers["content-type"], "application/json")
      assert.deepStrictEqual(sent.body, { model, input: ["hello world", "second input here"], dimensions: 8, user: "u-1" })
      assert.deepStrictEqual(result.embeddings.map((e) => e.index), [0, 1])
      assert.deepStrictEqual(result.embeddings[0]!.embedding, FakeUpstream.vectorFor(`${model}|hello world`, 8))
      assert.strictEqual(result.promptTokens, 5)
      assert.strictEqual(result.totalTokens, 5)
      assert.isUndefined(result.modalityTokens)
    }).pipe(overHttp))

  it.live("asks for base64 and forwards the upstream strings untouched", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* openAi()
      const result = yield* embed(request(model, texts("a", "b"), { encodingFormat: "base64", dimensions: 6 }))
      assert.strictEqual(lastBody(server).encoding_format, "base64")
      const expected = FakeUpstream.float32Base64(FakeUpstream.vectorFor(`${model}|b`, 6))
      assert.strictEqual(result.embeddings[1]!.embedding, expected)
    }).pipe(overHttp))

  it.live("encodes floats to base64 when the dialect cannot, exactly", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* openAi({ dialect: "together" })
      const result = yield* embed(request(model, texts("x"), { encodingFormat: "base64", dimensions: 5 }))
      assert.isUndefined(lastBody(server).encoding_format)
      const vector = FakeUpstream.vectorFor(`${model}|x`, 5)
      assert.strictEqual(result.embeddings[0]!.embedding, FakeUpstream.float32Base64(vector))
      assert.deepStrictEqual(VectorEncoding.fromBase64(result.embeddings[0]!.embedding as string), vector)
    }).pipe(overHttp))

  it.live("decodes base64 an upstream sent when the client wants floats", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* openAi()
      const vector = [0.5, -0.25, 1.5]
      server.setBehaviour({
        _tag: "Status",
        status: 200,
        body: JSON.stringify({ data: [{ index: 0, embedding: FakeUpstream.float32Base64(vector) }] })
      })
      const result = yield* embed(request(model, texts("x")))
      assert.deepStrictEqual(result.embeddings[0]!.embedding, vector)
      assert.strictEqual(result.promptTokens, 1)
    }).pipe(overHttp))

  it.live("a vector holding something other than finite numbers is InvalidResponse", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* openAi()
      server.setBehaviour({ _tag: "Status", status: 200, body: JSON.stringify({ data: [{ index: 0, embedding: [1, "2"] }] }) })
      const reason = yield* reasonOf(embed(request(model, texts("x"))))
      assert.strictEqual(reason._tag, "InvalidResponse")
      if (reason._tag !== "InvalidResponse") return
      assert.include(reason.detail, "an array of finite numbers")
    }).pipe(overHttp))

  it.live("sends token ids as arrays of integers", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* openAi({ fake: { defaultWidth: 4 } })
      const result = yield* embed(request("any-model", tokens([1, 2, 3], [4])))
      assert.deepStrictEqual(lastBody(server).input, [[1, 2, 3], [4]])
      assert.strictEqual(result.promptTokens, 4)
    }).pipe(overHttp))

  it.live("passes multimodal content through in the OpenRouter shape and keeps modality usage", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* openAi({ fake: { defaultWidth: 4 } })
      const input = items([text("a red square"), image(pngDataUrl)])
      const result = yield* embed(request("mm", input, { inputType: "query" }))
      assert.deepStrictEqual(lastBody(server), {
        model: "mm",
        input: [{ content: [{ type: "text", text: "a red square" }, { type: "image_url", image_url: { url: pngDataUrl } }] }],
        input_type: "query"
      })
      assert.deepStrictEqual(result.modalityTokens, { text_tokens: 3, image_tokens: 85 })
      assert.strictEqual(result.promptTokens, 88)
    }).pipe(overHttp))

  it.live("estimates tokens when the upstream reports no usage", () =>
    Effect.gen(function*() {
      const { embed } = yield* openAi({ fake: { reportUsage: false, defaultWidth: 4 } })
      const result = yield* embed(request("m", texts("Hello, world!")))
      assert.strictEqual(result.promptTokens, 4)
      assert.strictEqual(result.totalTokens, 4)
      assert.strictEqual(result.tokensEstimated, true)
    }).pipe(overHttp))

  it.live("a base URL with a trailing slash still reaches /embeddings", () =>
    Effect.gen(function*() {
      const { server, provider } = yield* openAi({ fake: { defaultWidth: 4 } })
      yield* provider.embed(connection(`${server.url}/`, key), request("m", texts("x")))
      assert.strictEqual(server.requests[0]!.path, "/v1/embeddings")
    }).pipe(overHttp))

  it.live("the OpenAI error body gives message and code", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* openAi()
      server.setBehaviour({
        _tag: "Status",
        status: 429,
        body: JSON.stringify({ error: { message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" } }),
        headers: { "retry-after-ms": "1500" }
      })
      const reason = yield* reasonOf(embed(request(model, texts("x"))))
      assert.deepStrictEqual(
        reason,
        { ...new UpstreamError.QuotaExhausted({ upstream_status: 429, provider_message: "You exceeded your current quota" }) }
      )
    }).pipe(overHttp))

  describe("dialects", () => {
    it("are declared by the catalog: the built-in providers carry theirs, a connection without one is generic", () => {
      const declared = Object.fromEntries(
        builtin.providers.filter((p) => p.adapter === "openai").map((p) => [p.slug, p.dialect])
      )
      assert.deepStrictEqual(declared, {
        openai: "openai",
        mistral: "mistral",
        together: "together",
        fireworks: "fireworks",
        deepinfra: "deepinfra"
      })
      for (const provider of builtin.providers.filter((p) => p.adapter === "openai")) {
        assert.strictEqual(connectionOf(provider, undefined).dialect, provider.dialect)
      }
      assert.isUndefined(connectionOf({ adapter: "openai", base_url: "https://api.mistral.ai/v1" }, undefined).dialect)
      // Jina has its own adapter (for its rerank API); its embeddings are this wire format in its dialect.
      assert.strictEqual(builtin.providers.find((p) => p.slug === "jina")?.adapter, "jina")
    })

    it.live("the jina adapter embeds in Jina's dialect", () =>
      Effect.gen(function*() {
        const server = yield* FakeUpstream.scoped(() => FakeOpenAi.start())
        const table = yield* Adapters.make
        yield* table.jina.embed(connection(server.url, "sk-fake"), request("jina-embeddings-v3", texts("a"), { inputType: "query" }))
        assert.strictEqual(lastBody(server).task, "retrieval.query")
        assert.notProperty(lastBody(server), "input_type")
      }).pipe(overHttp))

    it.live("a connection without a dialect is sent the generic wire format, whatever its host", () =>
      Effect.gen(function*() {
        const { server, embed } = yield* openAi()
        yield* embed(request(model, items([text("a"), image(pngDataUrl)]), { inputType: "query" }))
        assert.deepStrictEqual(lastBody(server).input, [{ content: [{ type: "text", text: "a" }, { type: "image_url", image_url: { url: pngDataUrl } }] }])
        assert.strictEqual(lastBody(server).input_type, "query")
      }).pipe(overHttp))

    const bodyFor = (dialect: OpenAiCompatible.DialectId, req: Parameters<typeof OpenAiCompatible.requestBody>[1]) =>
      OpenAiCompatible.requestBody(OpenAiCompatible.dialects[dialect], req)

    it.effect("OpenAI gets dimensions, base64 and user, never input_type", () =>
      Effect.gen(function*() {
        const body = yield* bodyFor(
          "openai",
          request("text-embedding-3-large", texts("q"), { dimensions: 256, encodingFormat: "base64", inputType: "query", user: "u" })
        )
        assert.deepStrictEqual(body, {
          model: "text-embedding-3-large",
          input: ["q"],
          dimensions: 256,
          encoding_format: "base64",
          user: "u"
        })
      }))

    it.effect("Mistral gets output_dimension and no user", () =>
      Effect.gen(function*() {
        const body = yield* bodyFor(
          "mistral",
          request("codestral-embed", texts("q"), { dimensions: 512, encodingFormat: "base64", user: "u" })
        )
        assert.deepStrictEqual(body, { model: "codestral-embed", input: ["q"], output_dimension: 512, encoding_format: "base64" })
      }))

    it.effect("Jina maps input_type to task and images to image inputs", () =>
      Effect.gen(function*() {
        const body = yield* bodyFor(
          "jina",
          request("jina-clip-v2", items([text("a cat")], [image("https://example.com/cat.png")], [image(pngDataUrl)]), {
            inputType: "search_document",
            encodingFormat: "base64",
            dimensions: 512
          })
        )
        assert.deepStrictEqual(body, {
          model: "jina-clip-v2",
          input: [{ text: "a cat" }, { image: "https://example.com/cat.png" }, { image: pngDataUrl.split(",")[1] }],
          dimensions: 512,
          embedding_type: "base64",
          task: "retrieval.passage"
        })
      }))

    it.effect("Jina refuses an input mixing text and image", () =>
      Effect.gen(function*() {
        const reason = yield* reasonOf(bodyFor("jina", request("jina-clip-v2", items([text("a"), image(pngDataUrl)]))))
        assert.strictEqual(reason._tag, "UnsupportedInput")
      }))

    it.effect("text-only dialects join text parts and refuse media and token ids", () =>
      Effect.gen(function*() {
        const joined = yield* bodyFor("openai", request("m", items([text("a"), text("b")])))
        assert.deepStrictEqual(joined.input, ["a\nb"])
        const media = yield* reasonOf(bodyFor("openai", request("m", items([audio("AAAA", "wav")]))))
        assert.deepStrictEqual(media, { _tag: "UnsupportedInput", detail: "input 0: openai embeds text only" })
        const ids = yield* reasonOf(bodyFor("mistral", request("m", tokens([1]))))
        assert.deepStrictEqual(ids, { _tag: "UnsupportedInput", detail: "mistral does not accept token ids" })
      }))

    it.live("an unsupported input never reaches the network", () =>
      Effect.gen(function*() {
        const { server, embed } = yield* openAi({ dialect: "mistral" })
        const reason = yield* reasonOf(embed(request("m", tokens([1, 2]))))
        assert.strictEqual(reason._tag, "UnsupportedInput")
        assert.strictEqual(server.requests.length, 0)
      }).pipe(overHttp))
  })
})

describeFailureModes({
  name: "OpenAiCompatible",
  start: () => FakeOpenAi.start({ defaultWidth: 64 }),
  apiKey: key,
  make: OpenAiCompatible.make(),
  model: "m",
  input: texts("one two", "three")
})
