import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as FakeOllama from "../fakes/FakeOllama.ts"
import * as FakeTei from "../fakes/FakeTei.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as AdapterFixture from "../support/AdapterFixture.ts"
import * as Ollama from "../../src/providers/Ollama.ts"
import * as Tei from "../../src/providers/Tei.ts"
import { lastBody, overHttp, reasonOf, request, texts, tokens } from "./ProviderHarness.ts"

const tei = AdapterFixture.make({ start: FakeTei.start, make: Tei.make, apiKey: "tei-key" })
const ollama = AdapterFixture.make({ start: FakeOllama.start, make: Ollama.make, apiKey: "unused" })

describe("Text Embeddings Inference", () => {
  it.live("embeds through /embed and counts tokens through /tokenize, each distinct text once", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* tei({ fake: { apiKey: "tei-key" } })
      const result = yield* embed(request("bge-small", texts("the cat sat", "a dog", "the cat sat"), { dimensions: 128 }))
      assert.deepStrictEqual(server.requests.map((r) => r.path), ["/embed", "/tokenize"])
      assert.deepStrictEqual(server.requests[0]!.body, { inputs: ["the cat sat", "a dog", "the cat sat"], truncate: false, normalize: true, dimensions: 128 })
      assert.deepStrictEqual(lastBody(server), { inputs: ["the cat sat", "a dog"], add_special_tokens: true })
      assert.strictEqual(server.requests[1]!.headers.authorization, "Bearer tei-key")
      assert.deepStrictEqual(result.embeddings[1]!.embedding, FakeUpstream.vectorFor("a dog", 128))
      // [CLS] + words + [SEP]: 5 + 4 + 5.
      assert.strictEqual(result.promptTokens, 14)
      assert.strictEqual(result.totalTokens, 14)
      assert.isUndefined(result.tokensEstimated)
    }).pipe(overHttp))

  it.live("tokenizes in batches the server accepts", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* tei({ fake: { apiKey: "tei-key", maxBatch: 80 } })
      const many = Array.from({ length: 70 }, (_, i) => `text number ${i}`)
      const result = yield* embed(request("bge-small", texts(...many)))
      assert.deepStrictEqual(
        server.requests.filter((r) => r.path === "/tokenize").map((r) => (r.body as { inputs: Array<string> }).inputs.length),
        [32, 32, 6]
      )
      assert.strictEqual(result.promptTokens, 70 * 5)
    }).pipe(overHttp))

  it.live("reads TEI's error bodies: 413 is too large, 429 a rate limit, 422 a bad request", () =>
    Effect.gen(function*() {
      const { embed } = yield* tei({ fake: { apiKey: "tei-key", maxBatch: 2 } })
      const tooMany = yield* reasonOf(embed(request("bge-small", texts("a", "b", "c"))))
      assert.strictEqual(tooMany._tag, "InputTooLarge")
      assert.include((tooMany as { provider_message?: string }).provider_message ?? "", "maximum allowed batch size 2")
      const { server, embed: again } = yield* tei({ fake: { apiKey: "tei-key" } })
      server.setBehaviour({ _tag: "Status", status: 429, body: JSON.stringify({ error: "Model is overloaded", error_type: "Overloaded" }) })
      assert.strictEqual((yield* reasonOf(again(request("bge-small", texts("a")))))._tag, "RateLimited")
      server.setBehaviour({ _tag: "Status", status: 422, body: JSON.stringify({ error: "Input validation error: inputs must have less than 512 tokens", error_type: "Validation" }) })
      assert.strictEqual((yield* reasonOf(again(request("bge-small", texts("a")))))._tag, "InvalidRequest")
    }).pipe(overHttp))

  it.live("refuses token ids before sending", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* tei({ fake: { apiKey: "tei-key" } })
      assert.strictEqual((yield* reasonOf(embed(request("bge-small", tokens([1, 2])))))._tag, "UnsupportedInput")
      assert.strictEqual(server.requests.length, 0)
    }).pipe(overHttp))

  it.live("reranks through /rerank, one score per text", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeTei.start({ apiKey: "tei-key" }))
      const adapter = yield* Tei.makeRerank
      const result = yield* adapter.rerank(
        { baseUrl: server.url, apiKey: Redacted.make("tei-key") },
        { upstreamModel: "bge-reranker", query: "cats", documents: [{ text: "a cat" }, { text: "a car" }, { text: "a dog" }] }
      )
      assert.deepStrictEqual(lastBody(server), { query: "cats", texts: ["a cat", "a car", "a dog"], raw_scores: false, return_text: false, truncate: false })
      assert.deepStrictEqual(result.scores.map((s) => s.index).sort(), [0, 1, 2])
    }).pipe(overHttp))
})

describe("Ollama", () => {
  it.live("embeds through /api/embed with tokens from prompt_eval_count", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* ollama()
      const result = yield* embed(request("nomic-embed-text", texts("hello world", "x"), { dimensions: 64 }))
      assert.strictEqual(server.requests[0]!.path, "/api/embed")
      assert.deepStrictEqual(lastBody(server), { model: "nomic-embed-text", input: ["hello world", "x"], truncate: false, dimensions: 64 })
      assert.deepStrictEqual(result.embeddings[0]!.embedding, FakeUpstream.vectorFor("nomic-embed-text|hello world", 64))
      assert.strictEqual(result.promptTokens, 7)
      assert.isUndefined(result.tokensEstimated)
    }).pipe(overHttp))

  it.live("an answer without prompt_eval_count is estimated from the input, never 0, and marked so", () =>
    Effect.gen(function*() {
      const { embed } = yield* ollama({ fake: { noCounts: true } })
      const result = yield* embed(request("nomic-embed-text", texts("Hello, world!", "x")))
      assert.strictEqual(result.promptTokens, 5)
      assert.strictEqual(result.tokensEstimated, true)
    }).pipe(overHttp))

  it.live("reads Ollama's { error } body: a model not pulled is not found", () =>
    Effect.gen(function*() {
      const { embed } = yield* ollama()
      const reason = yield* reasonOf(embed(request("llama-missing", texts("x"))))
      assert.strictEqual(reason._tag, "ModelNotFound")
      assert.include((reason as { provider_message?: string }).provider_message ?? "", "try pulling it first")
    }).pipe(overHttp))
})
