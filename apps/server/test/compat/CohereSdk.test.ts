import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { CohereClient, CohereClientV2, CohereError } from "cohere-ai"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeRerank from "../fakes/FakeRerank.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { type Gateway, startGateway } from "../embeddings/Gateway.ts"

const query = "how do rivers form deltas"
const documents = ["Bread rises with yeast.", "Rivers form deltas where they slow down.", "Deltas form at river mouths."]

const best = (docs: ReadonlyArray<string>) =>
  docs.map((d, index) => ({ index, relevance_score: FakeRerank.scoreOf(query, d) }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)

describe("cohere-ai SDK against Switchyard: rerank under the base URL http://host/api", () => {
  let gateway: Gateway
  let cohere: FakeUpstream.FakeServer
  let base: string

  beforeAll(async () => {
    cohere = await FakeCohere.start({ apiKey: "sk-fake" })
    gateway = await startGateway({
      credits: 10,
      config: {
        providers: [{
          slug: "alpha", name: "Alpha", adapter: "cohere", base_url: cohere.url, api_key_env: "ALPHA_API_KEY", data_collection: "deny",
          endpoints: [{
            model: "cohere/rerank-v3.5", upstream_model: "rerank-v3.5", task: "rerank", pricing: { search: "2" },
            supported_parameters: ["max_tokens_per_doc"]
          }]
        }]
      }
    })
    base = `${gateway.server.origin}/api`
  })
  afterAll(async () => {
    await gateway.close()
    await cohere.close()
  })

  it("CohereClientV2.rerank posts to /api/v2/rerank and gets Cohere's v2 answer, routed and billed by the gateway", async () => {
    const client = new CohereClientV2({ token: gateway.server.apiKey, baseUrl: base, maxRetries: 0 })
    const before = cohere.requests.length
    // Cohere's own model name, without the vendor: the one served model of that name.
    const response = await client.rerank({ model: "rerank-v3.5", query, documents, topN: 2, maxTokensPerDoc: 256, priority: 1 })
    assert.deepStrictEqual(
      response.results.map((r) => ({ index: r.index, relevance_score: r.relevanceScore })),
      best(documents).slice(0, 2)
    )
    assert.strictEqual(response.meta?.billedUnits?.searchUnits, 1)
    assert.strictEqual(response.meta?.apiVersion?.version, "2")
    assert.match(response.id ?? "", /^gen-rr-/u)
    const sent = cohere.requests.slice(before).map((r) => r.body as Record<string, unknown>)
    assert.deepStrictEqual(sent, [{ model: "rerank-v3.5", query, documents, max_tokens_per_doc: 256 }])

    const generation = await gateway.call(`/generation?id=${response.id}`, undefined)
    assert.strictEqual(generation.status, 200, generation.text)
    assert.strictEqual(generation.json.data.total_cost, 0.002)
  })

  it("CohereClient (v1).rerank reaches /api/v1/rerank under the same base URL", async () => {
    const client = new CohereClient({ token: gateway.server.apiKey, baseUrl: base, maxRetries: 0 })
    const response = await client.rerank({ model: "cohere/rerank-v3.5", query, documents, topN: 1, returnDocuments: true })
    assert.deepStrictEqual(response.results.map((r) => [r.index, r.document?.text]), [[best(documents)[0]!.index, documents[best(documents)[0]!.index]]])
  })

  it("the gateway's refusals reach the SDK as Cohere's errors, with the envelope's message", async () => {
    const client = new CohereClientV2({ token: gateway.server.apiKey, baseUrl: base, maxRetries: 0 })
    const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (e: unknown) => e)
    const unknown = await failure(client.rerank({ model: "cohere/none", query, documents }))
    assert.instanceOf(unknown, CohereError)
    assert.strictEqual((unknown as CohereError).statusCode, 404)
    assert.include(JSON.stringify((unknown as CohereError).body), "cohere/none")
    const empty = await failure(client.rerank({ model: "rerank-v3.5", query, documents: [] }))
    assert.strictEqual((empty as CohereError).statusCode, 400)
    const session = await failure(client.rerank({ model: "rerank-v3.5", query, documents }, { headers: { "x-session-id": "s".repeat(257) } }))
    assert.strictEqual((session as CohereError).statusCode, 400)
    assert.include(JSON.stringify((session as CohereError).body), "x-session-id must be at most 256 characters")
    const anonymous = new CohereClientV2({ token: "sk-not-a-key", baseUrl: base, maxRetries: 0 })
    assert.strictEqual(((await failure(anonymous.rerank({ model: "rerank-v3.5", query, documents }))) as CohereError).statusCode, 401)
    const management = new CohereClientV2({ token: gateway.server.managementKey, baseUrl: base, maxRetries: 0 })
    assert.strictEqual(((await failure(management.rerank({ model: "rerank-v3.5", query, documents }))) as CohereError).statusCode, 403)
  })
})
