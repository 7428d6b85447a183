import { assert, describe, it } from "@effect/vitest"
import type { EmbeddingProvider } from "@switchyard/core"
import { Effect, Redacted } from "effect"
import * as FakeInfinity from "../fakes/FakeInfinity.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVllm from "../fakes/FakeVllm.ts"
import * as AdapterFixture from "../support/AdapterFixture.ts"
import * as InfinityServer from "../../src/providers/Infinity.ts"
import * as Vllm from "../../src/providers/Vllm.ts"
import { describeFailureModes, lastBody, overHttp, reasonOf, request, texts, tokens } from "./ProviderHarness.ts"

const infinity = AdapterFixture.make({ start: FakeInfinity.start, make: InfinityServer.make, apiKey: "unused" })
const vllm = AdapterFixture.make({ start: FakeVllm.start, make: Vllm.make, apiKey: "vllm-key" })

const connectionTo = (server: FakeUpstream.FakeServer, key?: string): EmbeddingProvider.Connection => ({
  baseUrl: server.url,
  apiKey: key === undefined ? undefined : Redacted.make(key)
})

describe("Infinity", () => {
  it.live("embeds through /embeddings in OpenAI's shape, tokens from its usage", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* infinity()
      const result = yield* embed(request("BAAI/bge-small-en-v1.5", texts("the cat sat", "a dog"), { dimensions: 64, user: "u-1" }))
      assert.strictEqual(server.requests[0]!.path, "/embeddings")
      assert.deepStrictEqual(lastBody(server), { model: "BAAI/bge-small-en-v1.5", input: ["the cat sat", "a dog"], dimensions: 64, user: "u-1" })
      assert.deepStrictEqual(result.embeddings[1]!.embedding, FakeUpstream.vectorFor("BAAI/bge-small-en-v1.5|a dog", 64))
      assert.strictEqual(result.promptTokens, 5 + 4)
      assert.strictEqual(result.upstreamId, "infinity-0b9e3c1a")
    }).pipe(overHttp))

  it.live("asks base64 vectors as encoding_format and refuses token ids before sending", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* infinity()
      const result = yield* embed(request("BAAI/bge-small-en-v1.5", texts("x"), { encodingFormat: "base64" }))
      assert.strictEqual(lastBody(server).encoding_format, "base64")
      assert.strictEqual(result.embeddings.length, 1)
      const refused = yield* reasonOf(embed(request("BAAI/bge-small-en-v1.5", tokens([1, 2]))))
      assert.strictEqual(refused._tag, "UnsupportedInput")
      assert.strictEqual(server.requests.length, 1)
    }).pipe(overHttp))

  it.live("reads Infinity's error bodies: an unknown model is not found, with its message; a bad key is refused", () =>
    Effect.gen(function*() {
      const { embed } = yield* infinity()
      const reason = yield* reasonOf(embed(request("no/such-model", texts("x"))))
      assert.strictEqual(reason._tag, "ModelNotFound")
      assert.strictEqual((reason as { upstream_status?: number }).upstream_status, 400)
      assert.include((reason as { provider_message?: string }).provider_message ?? "", "available models: BAAI/bge-small-en-v1.5")
      const { embed: badKey } = yield* infinity({ fake: { apiKey: "inf-key" }, apiKey: "wrong" })
      assert.strictEqual((yield* reasonOf(badKey(request("BAAI/bge-small-en-v1.5", texts("x")))))._tag, "AuthFailed")
    }).pipe(overHttp))

  it.live("reranks through /rerank in Cohere's shape, one score per document, tokens from usage", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeInfinity.start())
      const adapter = yield* InfinityServer.make
      const result = yield* adapter.rerank(connectionTo(server), {
        upstreamModel: "mixedbread-ai/mxbai-rerank-xsmall-v1",
        query: "cats",
        documents: [{ text: "a cat" }, { text: "cats purr" }, { text: "a car" }]
      })
      assert.strictEqual(server.requests[0]!.path, "/rerank")
      assert.deepStrictEqual(lastBody(server), {
        model: "mixedbread-ai/mxbai-rerank-xsmall-v1",
        query: "cats",
        documents: ["a cat", "cats purr", "a car"],
        return_documents: false
      })
      assert.deepStrictEqual(result.scores.map((s) => s.index).sort(), [0, 1, 2])
      assert.strictEqual(result.scores[0]!.index, 1)
      assert.strictEqual(result.totalTokens, 3 + 3 + 3)
      assert.strictEqual(result.upstreamId, "infinity-9a1c")
    }).pipe(overHttp))

  it.live("refuses an image document instead of dropping it", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeInfinity.start())
      const adapter = yield* InfinityServer.make
      const reason = yield* reasonOf(adapter.rerank(connectionTo(server), {
        upstreamModel: "mixedbread-ai/mxbai-rerank-xsmall-v1",
        query: "cats",
        documents: [{ text: "a cat" }, { image: "https://example.com/cat.png" }]
      }))
      assert.strictEqual(reason._tag, "UnsupportedInput")
      assert.strictEqual(server.requests.length, 0)
    }).pipe(overHttp))
})

describe("vLLM", () => {
  it.live("embeds through /v1/embeddings, texts or token ids, tokens from usage", () =>
    Effect.gen(function*() {
      const { server, embed } = yield* vllm({ fake: { apiKey: "vllm-key" } })
      const result = yield* embed(request("intfloat/e5-small-v2", texts("hello world"), { dimensions: 32 }))
      assert.strictEqual(server.requests[0]!.path, "/v1/embeddings")
      assert.strictEqual(server.requests[0]!.headers.authorization, "Bearer vllm-key")
      assert.deepStrictEqual(lastBody(server), { model: "intfloat/e5-small-v2", input: ["hello world"], dimensions: 32 })
      assert.deepStrictEqual(result.embeddings[0]!.embedding, FakeUpstream.vectorFor("intfloat/e5-small-v2|hello world", 32))
      assert.strictEqual(result.promptTokens, 4)
      const ids = yield* embed(request("intfloat/e5-small-v2", tokens([101, 7, 8, 102])))
      assert.deepStrictEqual(lastBody(server).input, [[101, 7, 8, 102]])
      assert.strictEqual(ids.promptTokens, 4)
    }).pipe(overHttp))

  it.live("reads vLLM's { object: error } body: a model it does not serve is not found", () =>
    Effect.gen(function*() {
      const { embed } = yield* vllm({ fake: { apiKey: "vllm-key" } })
      const reason = yield* reasonOf(embed(request("BAAI/bge-m3", texts("x"))))
      assert.strictEqual(reason._tag, "ModelNotFound")
      assert.include((reason as { provider_message?: string }).provider_message ?? "", "does not exist")
      const { embed: badKey } = yield* vllm({ fake: { apiKey: "vllm-key" }, apiKey: "wrong" })
      assert.strictEqual((yield* reasonOf(badKey(request("intfloat/e5-small-v2", texts("x")))))._tag, "AuthFailed")
    }).pipe(overHttp))

  it.live("reranks through /v1/rerank in Jina's shape", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeVllm.start())
      const adapter = yield* Vllm.make
      const result = yield* adapter.rerank(connectionTo(server), {
        upstreamModel: "BAAI/bge-reranker-v2-m3",
        query: "cat",
        documents: [{ text: "a car" }, { text: "a cat" }]
      })
      assert.strictEqual(server.requests[0]!.path, "/v1/rerank")
      assert.deepStrictEqual(lastBody(server).documents, ["a car", "a cat"])
      assert.strictEqual(result.scores[0]!.index, 1)
      assert.strictEqual(result.totalTokens, 3 + 3)
      assert.strictEqual(result.upstreamId, "rerank-77d1")
    }).pipe(overHttp))
})

describeFailureModes({
  name: "Infinity",
  start: () => FakeInfinity.start({ apiKey: "inf-key" }),
  make: InfinityServer.make,
  apiKey: "inf-key",
  model: "BAAI/bge-small-en-v1.5",
  input: texts("alpha", "beta")
})

describeFailureModes({
  name: "vLLM",
  start: () => FakeVllm.start({ apiKey: "vllm-key" }),
  make: Vllm.make,
  apiKey: "vllm-key",
  model: "intfloat/e5-small-v2",
  input: texts("alpha", "beta")
})
