import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVertex from "../fakes/FakeVertex.ts"
import { overHttp } from "../support/AdapterFixture.ts"
import * as Adapters from "../../src/providers/Adapters.ts"
import * as Vertex from "../../src/providers/Vertex.ts"
import { request, texts } from "./ProviderHarness.ts"

const provider = (baseUrl: string, project = "fake-project"): Adapters.ProviderAccess => ({
  slug: "google-vertex",
  adapter: "vertex",
  base_url: baseUrl,
  project,
  location: "us-central1"
})

// The fake plays the metadata server too: google-auth-library finds it through GCE_METADATA_HOST.
const started = Effect.fnUntraced(function*() {
  const server = yield* Effect.acquireRelease(Effect.promise(() => FakeVertex.start()), (s) => Effect.promise(() => s.close()))
  const saved = process.env.GCE_METADATA_HOST
  process.env.GCE_METADATA_HOST = server.host
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      if (saved === undefined) delete process.env.GCE_METADATA_HOST
      else process.env.GCE_METADATA_HOST = saved
    })
  )
  return { server, vertex: yield* Vertex.make, ranker: yield* Vertex.makeRerank }
})

describe("Vertex AI", () => {
  it.live("embeds through :predict with the metadata server's token, fetched once for many calls", () =>
    Effect.gen(function*() {
      const { server, vertex } = yield* started()
      const connection = Adapters.connectionOf(provider(server.url), undefined)
      const result = yield* vertex.embed(
        connection,
        request("text-embedding-005", texts("what is a gateway", "x"), { inputType: "query", dimensions: 8 })
      )
      yield* vertex.embed(connection, request("text-embedding-005", texts("again")))
      const calls = server.requests.filter((r) => r.path.startsWith("/v1/"))
      assert.strictEqual(calls[0]!.path, "/v1/projects/fake-project/locations/us-central1/publishers/google/models/text-embedding-005:predict")
      assert.deepStrictEqual(calls[0]!.body, {
        instances: [{ content: "what is a gateway", task_type: "RETRIEVAL_QUERY" }, { content: "x", task_type: "RETRIEVAL_QUERY" }],
        parameters: { autoTruncate: false, outputDimensionality: 8 }
      })
      assert.deepStrictEqual(result.embeddings[1]!.embedding, FakeUpstream.vectorFor("text-embedding-005|RETRIEVAL_QUERY|x", 8))
      assert.strictEqual(result.promptTokens, 5)
      assert.strictEqual(server.tokensIssued(), 1)
    }).pipe(overHttp))

  it.live("reranks through the Ranking API, each record scored at its index", () =>
    Effect.gen(function*() {
      const { server, ranker } = yield* started()
      const connection = Adapters.connectionOf(provider(server.url), undefined)
      const result = yield* ranker.rerank(connection, {
        upstreamModel: "semantic-ranker-default@latest",
        query: "gateway",
        documents: [{ text: "a" }, { text: "b" }, { text: "c" }]
      } as never)
      const call = server.requests.find((r) => r.path.includes(":rank"))!
      assert.strictEqual(call.path, "/v1/projects/fake-project/locations/global/rankingConfigs/default_ranking_config:rank")
      assert.deepStrictEqual(result.scores.map((s) => s.index).toSorted(), [0, 1, 2])
      const expected = (content: string) => Number(FakeUpstream.vectorFor(`gateway|${content}`, 1)[0]!.toFixed(4)) / 2 + 0.5
      assert.strictEqual(result.scores.find((s) => s.index === 1)!.relevance_score, expected("b"))
    }).pipe(overHttp))

  it.live("a project the identity may not use is a 403-class refusal, the token nowhere in the failure", () =>
    Effect.gen(function*() {
      const { server, vertex } = yield* started()
      const failure = yield* Effect.flip(vertex.embed(Adapters.connectionOf(provider(server.url, "other"), undefined), request("text-embedding-005", texts("x"))))
      assert.deepStrictEqual({ ...failure.reason }, { _tag: "AuthFailed", upstream_status: 403 })
      const token = (server.requests.find((r) => r.path.startsWith("/v1/"))!.headers.authorization ?? "").slice(7)
      assert.isAbove(token.length, 8)
      assert.notInclude(JSON.stringify(failure), token)
    }).pipe(overHttp))
})
