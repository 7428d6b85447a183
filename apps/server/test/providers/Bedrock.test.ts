import { assert, describe, it } from "@effect/vitest"
import type { EmbeddingProvider } from "@switchyard/core"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import * as FakeBedrock from "../fakes/FakeBedrock.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as Bedrock from "../../src/providers/Bedrock.ts"
import { overHttp, reasonOf, request, texts } from "./ProviderHarness.ts"

FakeBedrock.isolateCredentialChain()

const titanModel = "amazon.titan-embed-text-v2:0"

const started = (options: FakeBedrock.Options = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const fake = await FakeBedrock.start(options)
      FakeBedrock.pointCredentialChainAt(fake)
      return fake
    }),
    (fake) => Effect.promise(() => fake.close())
  )

const connectionTo = (fake: FakeBedrock.FakeBedrock, apiKey?: string): EmbeddingProvider.Connection => ({
  provider: "amazon-bedrock",
  baseUrl: fake.url,
  apiKey: apiKey === undefined ? undefined : Redacted.make(apiKey),
  region: "us-east-1"
})

const titanVector = (text: string, width = 1024) => FakeUpstream.vectorFor(`${titanModel}|${text}`, width)

describe("Bedrock", () => {
  it.live("embeds through Titan v2 one signed call per input, vectors in order, tokens from inputTextTokenCount", () =>
    Effect.gen(function*() {
      const fake = yield* started()
      const bedrock = yield* Bedrock.make()
      const result = yield* bedrock.embed(connectionTo(fake), request(titanModel, texts("a red fox", "b", "c d"), { dimensions: 256 }))
      assert.deepStrictEqual(result.embeddings.map((e) => e.embedding), [titanVector("a red fox", 256), titanVector("b", 256), titanVector("c d", 256)])
      assert.strictEqual(result.promptTokens, 6)
      assert.strictEqual(fake.invocations.length, 3)
      assert.strictEqual(fake.invocations[0]!.path, "/model/amazon.titan-embed-text-v2%3A0/invoke")
      assert.deepStrictEqual(fake.invocations.map((i) => i.body).find((b) => (b as { inputText: string }).inputText === "b"), {
        inputText: "b",
        dimensions: 256,
        normalize: true,
        embeddingTypes: ["float"]
      })
      assert.match(String(fake.invocations[0]!.headers.authorization), /^AWS4-HMAC-SHA256 Credential=ASIAFAKE\d+\/\d{8}\/us-east-1\/bedrock\/aws4_request/u)
      assert.strictEqual(fake.issued.length, 1)
    }).pipe(overHttp))

  it.live("embeds through Cohere Embed at most 96 texts a call, tokens from the token-count header", () =>
    Effect.gen(function*() {
      const fake = yield* started()
      const bedrock = yield* Bedrock.make()
      const inputs = Array.from({ length: 100 }, (_, i) => `text number ${i}`)
      const result = yield* bedrock.embed(connectionTo(fake), request("cohere.embed-english-v3", texts(...inputs), { inputType: "query" }))
      assert.deepStrictEqual(fake.invocations.map((i) => (i.body as { texts: Array<string> }).texts.length).sort(), [4, 96])
      assert.strictEqual((fake.invocations[0]!.body as { input_type: string }).input_type, "search_query")
      assert.strictEqual(result.embeddings.length, 100)
      for (const [i, e] of result.embeddings.entries()) {
        assert.deepStrictEqual(e.embedding, FakeUpstream.vectorFor(`cohere.embed-english-v3|search_query|text number ${i}`, 1024))
      }
      assert.strictEqual(result.promptTokens, 300)
    }).pipe(overHttp))

  it.live("reranks through Cohere Rerank 3.5 with api_version 2, every document scored", () =>
    Effect.gen(function*() {
      const fake = yield* started()
      const bedrock = yield* Bedrock.make()
      const result = yield* bedrock.rerank(connectionTo(fake), {
        upstreamModel: "cohere.rerank-v3-5:0",
        query: "red fox",
        documents: [{ text: "a blue whale" }, { text: "the red fox jumps" }, { text: "red" }]
      })
      assert.deepStrictEqual(fake.invocations[0]!.body, {
        query: "red fox",
        documents: ["a blue whale", "the red fox jumps", "red"],
        top_n: 3,
        api_version: 2
      })
      assert.strictEqual([...result.scores].sort((a, b) => b.relevance_score - a.relevance_score)[0]!.index, 1)
      assert.strictEqual(result.scores.length, 3)
    }).pipe(overHttp))

  it.live("a signature the fake does not recompute is refused as AuthFailed, the secret nowhere in the failure", () =>
    Effect.gen(function*() {
      const fake = yield* started({ staticKey: { accessKeyId: "AKIAFAKEKEY000000001", secretAccessKey: "the-real-secret-value" } })
      const wrongSecret = "a-wrong-secret-value-123"
      const bedrock = yield* Bedrock.make(() => Promise.resolve({ accessKeyId: "AKIAFAKEKEY000000001", secretAccessKey: wrongSecret }))
      const failure = yield* bedrock.embed(connectionTo(fake), request(titanModel, texts("x"))).pipe(Effect.flip)
      assert.deepStrictEqual({ ...failure.reason }, { _tag: "AuthFailed", upstream_status: 403 })
      assert.notInclude(JSON.stringify(failure), wrongSecret)
      // The right secret passes the same check.
      const right = yield* Bedrock.make(() => Promise.resolve({ accessKeyId: "AKIAFAKEKEY000000001", secretAccessKey: "the-real-secret-value" }))
      const result = yield* right.embed(connectionTo(fake), request(titanModel, texts("x")))
      assert.deepStrictEqual(result.embeddings[0]!.embedding, titanVector("x"))
    }).pipe(overHttp))

  it.live("a Bedrock API key goes as a bearer token, unsigned", () =>
    Effect.gen(function*() {
      const fake = yield* started({ apiKey: "ABSKfakebedrockkey" })
      const bedrock = yield* Bedrock.make()
      yield* bedrock.embed(connectionTo(fake, "ABSKfakebedrockkey"), request(titanModel, texts("x")))
      assert.strictEqual(fake.invocations[0]!.headers.authorization, "Bearer ABSKfakebedrockkey")
      assert.strictEqual(fake.issued.length, 0)
    }).pipe(overHttp))

  it.live("Bedrock's error types decide the reason", () =>
    Effect.gen(function*() {
      const fake = yield* started()
      const bedrock = yield* Bedrock.make()
      const once = () => reasonOf(bedrock.embed(connectionTo(fake), request(titanModel, texts("x"))))
      fake.refuseNext({ status: 429, type: "ThrottlingException", message: "Too many requests, please wait before trying again." })
      assert.strictEqual((yield* once())._tag, "RateLimited")
      fake.refuseNext({ status: 429, type: "ModelNotReadyException", message: "Model is not ready for inference." })
      assert.strictEqual((yield* once())._tag, "Unavailable")
      fake.refuseNext({ status: 400, type: "ServiceQuotaExceededException", message: "Your request exceeds the service quota for your account." })
      assert.strictEqual((yield* once())._tag, "RateLimited")
      fake.refuseNext({ status: 403, type: "AccessDeniedException", message: "You don't have access to the model with the specified model ID." })
      assert.strictEqual((yield* once())._tag, "AuthFailed")
      fake.refuseNext({ status: 400, type: "ValidationException", message: "Malformed input request: #: extraneous key [foo] is not permitted" })
      assert.deepInclude(yield* once(), { _tag: "InvalidRequest", upstream_status: 400, provider_code: "ValidationException" })
      const unknownModel = yield* reasonOf(bedrock.embed(connectionTo(fake), request("amazon.titan-embed-text-v9:0", texts("x"))))
      assert.strictEqual(unknownModel._tag, "ModelNotFound")
    }).pipe(overHttp))

  it.effect("holds the chain's credential until five minutes before it expires, then fetches one new one", () =>
    Effect.gen(function*() {
      const start = Date.parse("2026-01-01T00:00:00Z")
      let now = start
      const fake = yield* started({ credentialLifetimeMs: 15 * 60_000, now: () => now })
      yield* TestClock.setTime(start)
      const bedrock = yield* Bedrock.make()
      const embed = () => bedrock.embed(connectionTo(fake), request(titanModel, texts("x", "y")))
      yield* embed()
      yield* embed()
      assert.strictEqual(fake.issued.length, 1)
      now = start + 9 * 60_000
      yield* TestClock.setTime(now)
      yield* embed()
      assert.strictEqual(fake.issued.length, 1)
      now = start + 11 * 60_000
      yield* TestClock.setTime(now)
      yield* embed()
      yield* embed()
      assert.strictEqual(fake.issued.length, 2)
      assert.strictEqual(fake.usesOf(fake.issued[0]!.accessKeyId), 6)
      assert.strictEqual(fake.usesOf(fake.issued[1]!.accessKeyId), 4)
    }).pipe(overHttp))

  it.live("1,000 requests of 8 inputs at 16 at a time: every vector in order, one credential fetch", () =>
    Effect.gen(function*() {
      const fake = yield* started()
      const bedrock = yield* Bedrock.make()
      const connection = connectionTo(fake)
      const outcomes = yield* Effect.forEach(Array.from({ length: 1000 }, (_, r) => r), (r) => {
        const inputs = Array.from({ length: 8 }, (_, i) => `request ${r} input ${i}`)
        return bedrock.embed(connection, request(titanModel, texts(...inputs), { dimensions: 256 })).pipe(
          Effect.map((result) => result.embeddings.every((e, i) => e.index === i && JSON.stringify(e.embedding) === JSON.stringify(titanVector(inputs[i]!, 256))))
        )
      }, { concurrency: 16 })
      assert.strictEqual(outcomes.filter((ok) => !ok).length, 0)
      assert.strictEqual(fake.invocations.length, 8000)
      assert.strictEqual(fake.issued.length, 1)
    }).pipe(overHttp), 180_000)
})
