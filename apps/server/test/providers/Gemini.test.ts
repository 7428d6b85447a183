import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as FakeGemini from "../fakes/FakeGemini.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as AdapterFixture from "../support/AdapterFixture.ts"
import * as Gemini from "../../src/providers/Gemini.ts"
import {
  audio,
  describeFailureModes,
  file,
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

const key = "AIza-fake"

const subject = { start: FakeGemini.start, make: Gemini.make, apiKey: key }

const gemini = AdapterFixture.make(subject)

describe("Gemini", () => {
  it.live("posts one request per text to batchEmbedContents with x-goog-api-key", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* gemini()
      const result = yield* embed(
        request("gemini-embedding-001", texts("What is the meaning of life?", "x"), { inputType: "query", dimensions: 8 })
      )
      const sent = server.requests[0]!
      assert.strictEqual(sent.path, "/v1beta/models/gemini-embedding-001:batchEmbedContents")
      assert.strictEqual(sent.headers["x-goog-api-key"], key)
      assert.isUndefined(sent.headers.authorization)
      assert.deepStrictEqual(sent.body, {
        requests: [
          {
            model: "models/gemini-embedding-001",
            content: { parts: [{ text: "What is the meaning of life?" }] },
            taskType: "RETRIEVAL_QUERY",
            outputDimensionality: 8
          },
          {
            model: "models/gemini-embedding-001",
            content: { parts: [{ text: "x" }] },
            taskType: "RETRIEVAL_QUERY",
            outputDimensionality: 8
          }
        ]
      })
      assert.deepStrictEqual(
        result.embeddings[1]!.embedding,
        FakeUpstream.vectorFor(`models/gemini-embedding-001|RETRIEVAL_QUERY|${JSON.stringify([{ text: "x" }])}`, 8)
      )
      assert.strictEqual(result.promptTokens, 8)
      assert.strictEqual(result.totalTokens, 8)
    }).pipe(overHttp))

  it.live("accepts a models/ prefix and converts floats to base64", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* gemini()
      const result = yield* embed(
        request("models/gemini-embedding-001", texts("x"), { encodingFormat: "base64", dimensions: 4 })
      )
      assert.strictEqual(server.requests[0]!.path, "/v1beta/models/gemini-embedding-001:batchEmbedContents")
      assert.strictEqual(
        result.embeddings[0]!.embedding,
        FakeUpstream.float32Base64(FakeUpstream.vectorFor(`models/gemini-embedding-001||${JSON.stringify([{ text: "x" }])}`, 4))
      )
    }).pipe(overHttp))

  it.live("sends media as inline_data and takes modality usage when reported", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* gemini({ fake: { reportUsage: true } })
      const result = yield* embed(
        request(
          "gemini-embedding-2",
          items([text("a red square"), image(pngDataUrl)], [audio("data:audio/wav;base64,UklGRiQAAABXQVZF")]),
          { inputType: "document", dimensions: 768 }
        )
      )
      assert.deepStrictEqual(lastBody(server), fixtureJson("gemini/request-multimodal.json"))
      assert.strictEqual(result.promptTokens, 3 + 258 + 258)
      assert.deepStrictEqual(result.modalityTokens, { text_tokens: 3, image_tokens: 258, audio_tokens: 258 })
    }).pipe(overHttp))

  it.effect("maps input types to task types and drops unknown ones", () =>
    Effect.gen(function*() {
      const taskOf = (inputType: string) =>
        Gemini.requestBody(request("m", texts("x"), { inputType })).pipe(
          Effect.map((body) => (body.requests[0] as { readonly taskType?: string }).taskType)
        )
      assert.strictEqual(yield* taskOf("search_document"), "RETRIEVAL_DOCUMENT")
      assert.strictEqual(yield* taskOf("text-matching"), "SEMANTIC_SIMILARITY")
      assert.strictEqual(yield* taskOf("CLUSTERING"), "CLUSTERING")
      assert.strictEqual(yield* taskOf("code.query"), "CODE_RETRIEVAL_QUERY")
      assert.strictEqual(yield* taskOf("question_answering"), "QUESTION_ANSWERING")
      assert.isUndefined(yield* taskOf("poetry"))
    }))

  it.effect("refuses token ids, image URLs and media of unknown type", () =>
    Effect.gen(function*() {
      const ids = yield* reasonOf(Gemini.requestBody(request("m", tokens([1]))))
      assert.deepStrictEqual(ids, { _tag: "UnsupportedInput", detail: "Gemini does not accept token ids" })
      const url = yield* reasonOf(Gemini.requestBody(request("m", items([image("https://example.com/a.png")]))))
      assert.deepStrictEqual(url, {
        _tag: "UnsupportedInput",
        detail: "input 0: Gemini takes images inline only, as base64 data: URLs"
      })
      const unknown = yield* reasonOf(Gemini.requestBody(request("m", items([file("JVBERi0=")]))))
      assert.deepStrictEqual(unknown, {
        _tag: "UnsupportedInput",
        detail: "input 0: the file's media type is unknown; send a data: URL or a format"
      })
      const pdf = yield* Gemini.requestBody(request("m", items([file("JVBERi0=", "pdf")])))
      assert.deepStrictEqual((pdf.requests[0] as { readonly content: unknown }).content, {
        parts: [{ inline_data: { mime_type: "application/pdf", data: "JVBERi0=" } }]
      })
    }))

  it.live("parses a recorded answer and estimates the tokens it does not report", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* gemini()
      server.setBehaviour({ _tag: "Status", status: 200, body: fixture("gemini/batchEmbedContents.json") })
      const result = yield* embed(request("gemini-embedding-001", texts("Hello, world", "b")))
      assert.deepStrictEqual(result.embeddings[1]!.embedding, [0.0217412, -0.0067123095, -0.0009346917, -0.05672155])
      assert.strictEqual(result.promptTokens, 4)
    }).pipe(overHttp))

  it.live("a 429 takes its retry delay from RetryInfo when no header says so", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* gemini()
      server.setBehaviour({ _tag: "Status", status: 429, body: fixture("gemini/error-429.json") })
      const reason = yield* reasonOf(embed(request("gemini-embedding-001", texts("x"))))
      assert.strictEqual(reason._tag, "RateLimited")
      if (reason._tag !== "RateLimited") return
      assert.strictEqual(reason.retry_after_ms, 41_000)
      assert.strictEqual(reason.provider_message, "Resource has been exhausted (e.g. check quota).")
    }).pipe(overHttp))

  it.live("an invalid key is 400 with the API_KEY_INVALID reason", () =>
    Effect.gen(function*() {
      const { embed } = yield* gemini({ apiKey: "bad" })
      const reason = yield* reasonOf(embed(request("gemini-embedding-001", texts("x"))))
      assert.strictEqual(reason._tag, "InvalidRequest")
      if (reason._tag !== "InvalidRequest") return
      assert.strictEqual(reason.upstream_status, 400)
      assert.strictEqual(reason.provider_code, "API_KEY_INVALID")
    }).pipe(overHttp))
})

describeFailureModes({
  ...subject,
  name: "Gemini",
  model: "gemini-embedding-001",
  input: texts("one two", "three")
})
