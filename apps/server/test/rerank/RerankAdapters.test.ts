import { assert, describe, it } from "@effect/vitest"
import type * as RerankProvider from "@switchyard/core/providers/RerankProvider"
import { Effect } from "effect"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeRerank from "../fakes/FakeRerank.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVoyage from "../fakes/FakeVoyage.ts"
import { connection, overHttp } from "../support/AdapterFixture.ts"
import * as Cohere from "../../src/providers/Cohere.ts"
import * as Jina from "../../src/providers/Jina.ts"
import * as Local from "../../src/providers/Local.ts"
import * as Voyage from "../../src/providers/Voyage.ts"

const query = "how do rivers form deltas"
const documents = [
  "Bread rises because yeast makes gas.",
  "Rivers form deltas where they slow and drop sediment.",
  "Deltas form at river mouths."
]

const asSent = (texts: ReadonlyArray<string>) => texts.map((text) => ({ text }))

const expectedOrder = (docs: ReadonlyArray<string>) =>
  docs.map((d, index) => ({ index, score: FakeRerank.scoreOf(query, d) })).sort((a, b) => b.score - a.score).map((s) => s.index)

const byScore = (scores: ReadonlyArray<RerankProvider.Score>) =>
  [...scores].sort((a, b) => b.relevance_score - a.relevance_score).map((s) => s.index)

const reasonOf = <A, R>(effect: Effect.Effect<A, { readonly reason: { readonly _tag: string } }, R>) =>
  effect.pipe(Effect.flip, Effect.map((error) => error.reason._tag))

describe("rerank adapters", () => {
  it.live("Cohere posts to /v2/rerank with max_tokens_per_doc and bills its search units", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeCohere.start())
      const adapter = yield* Cohere.makeRerank
      const result = yield* adapter.rerank(connection(server.url, "co-fake"), {
        upstreamModel: "rerank-v3.5",
        query,
        documents: asSent(documents),
        maxTokensPerDoc: 512
      })
      const sent = server.requests[0]!
      assert.strictEqual(sent.path, "/v2/rerank")
      assert.strictEqual(sent.headers.authorization, "Bearer co-fake")
      assert.deepStrictEqual(sent.body, { model: "rerank-v3.5", query, documents, max_tokens_per_doc: 512 })
      assert.deepStrictEqual(byScore(result.scores), expectedOrder(documents))
      assert.strictEqual(result.searchUnits, 1)
      assert.strictEqual(result.totalTokens, undefined)
      assert.strictEqual(result.upstreamId, "fake-rerank-3")
    }).pipe(overHttp))

  it.live("Voyage posts to /v1/rerank and bills tokens", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeVoyage.start())
      const adapter = yield* Voyage.makeRerank
      const result = yield* adapter.rerank(connection(server.url, "pa-fake"), { upstreamModel: "rerank-2.5", query, documents: asSent(documents) })
      assert.strictEqual(server.requests[0]!.path, "/v1/rerank")
      assert.deepStrictEqual(server.requests[0]!.body, { model: "rerank-2.5", query, documents })
      assert.deepStrictEqual(byScore(result.scores), expectedOrder(documents))
      const words = documents.reduce((n, d) => n + FakeUpstream.wordCount(query) + FakeUpstream.wordCount(d), 0)
      assert.strictEqual(result.totalTokens, words)
      assert.strictEqual(result.searchUnits, undefined)
    }).pipe(overHttp))

  it.live("Jina's shape posts to /rerank without asking the documents back", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeOpenAi.start({ apiKey: "jina-fake" }))
      const adapter = yield* Jina.makeRerank
      const result = yield* adapter.rerank(connection(server.url, "jina-fake"), {
        upstreamModel: "jina-reranker-v2-base-multilingual",
        query,
        documents: asSent(documents)
      })
      assert.strictEqual(server.requests[0]!.path, "/v1/rerank")
      assert.deepStrictEqual(server.requests[0]!.body, {
        model: "jina-reranker-v2-base-multilingual",
        query,
        documents,
        return_documents: false
      })
      assert.deepStrictEqual(byScore(result.scores), expectedOrder(documents))
      assert.isNumber(result.totalTokens)
    }).pipe(overHttp))

  it.live("Jina's shape sends every document of a call with an image as an object, the image kept", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeOpenAi.start({ apiKey: "jina-fake" }))
      const adapter = yield* Jina.makeRerank
      const image = "https://example.com/delta.png"
      const result = yield* adapter.rerank(connection(server.url, "jina-fake"), {
        upstreamModel: "jina-reranker-m0",
        query,
        documents: [{ text: documents[0]! }, { image }, { text: documents[2]!, image }]
      })
      assert.deepStrictEqual((server.requests[0]!.body as { documents: unknown }).documents, [
        { text: documents[0] },
        { image },
        { text: documents[2], image }
      ])
      assert.strictEqual(result.scores.length, 3)
    }).pipe(overHttp))

  it.live("a text-only rerank API refuses a document with an image instead of sending its text alone", () =>
    Effect.gen(function*() {
      const cohere = yield* FakeUpstream.scoped(() => FakeCohere.start())
      const voyage = yield* FakeUpstream.scoped(() => FakeVoyage.start())
      const withImage = [{ text: "rivers" }, { text: "a delta", image: "https://example.com/delta.png" }]
      const refusals = [
        yield* (yield* Cohere.makeRerank).rerank(connection(cohere.url, "co-fake"), { upstreamModel: "rerank-v3.5", query, documents: withImage })
          .pipe(Effect.flip),
        yield* (yield* Voyage.makeRerank).rerank(connection(voyage.url, "pa-fake"), { upstreamModel: "rerank-2.5", query, documents: withImage })
          .pipe(Effect.flip),
        yield* Local.makeRerank().rerank(connection("local:", undefined), { upstreamModel: "local-rerank-v1", query, documents: withImage })
          .pipe(Effect.flip)
      ]
      for (const error of refusals) {
        assert.strictEqual(error.reason._tag, "UnsupportedInput")
        assert.include(JSON.stringify(error.reason), "document 1 has an image")
      }
      assert.strictEqual(cohere.requests.length + voyage.requests.length, 0)
    }).pipe(overHttp))

  it.live("an answer that leaves a document unscored is invalid, not a short list", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeVoyage.start())
      server.setBehaviour({ _tag: "WrongCount" })
      const adapter = yield* Voyage.makeRerank
      const reason = yield* reasonOf(adapter.rerank(connection(server.url, "pa-fake"), { upstreamModel: "rerank-2.5", query, documents: asSent(documents) }))
      assert.strictEqual(reason, "InvalidResponse")
    }).pipe(overHttp))

  it.live("a provider's refusal keeps its status class", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeCohere.start({ maxDocuments: 2 }))
      const adapter = yield* Cohere.makeRerank
      const reason = yield* reasonOf(adapter.rerank(connection(server.url, "co-fake"), { upstreamModel: "rerank-v3.5", query, documents: asSent(documents) }))
      assert.strictEqual(reason, "InvalidRequest")
      server.setBehaviour({ _tag: "Status", status: 503 })
      const down = yield* reasonOf(adapter.rerank(connection(server.url, "co-fake"), { upstreamModel: "rerank-v3.5", query, documents: [{ text: "a" }] }))
      assert.notStrictEqual(down, "InvalidRequest")
    }).pipe(overHttp))

  it.effect("local-rerank ranks the relevant documents of a fixed set first", () =>
    Effect.gen(function*() {
      const set = [
        "The recipe needs flour, butter and two eggs.",
        "Photosynthesis turns sunlight, water and carbon dioxide into sugar in plant leaves.",
        "The train leaves the station at nine.",
        "Plants use sunlight to make sugar through photosynthesis.",
        "Stock prices fell sharply on Monday."
      ]
      const result = yield* Local.makeRerank().rerank(connection("local:", undefined), {
        upstreamModel: "local-rerank-v1",
        query: "how do plants make sugar from sunlight",
        documents: asSent(set)
      })
      const order = byScore(result.scores)
      assert.sameMembers(order.slice(0, 2), [1, 3])
      for (const s of result.scores) assert.isTrue(s.relevance_score >= 0 && s.relevance_score <= 1)
      assert.isAbove(result.totalTokens!, 0)
    }))
})
