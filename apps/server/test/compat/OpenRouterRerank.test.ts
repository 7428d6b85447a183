import { OpenRouter } from "@openrouter/sdk"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { type Gateway, startGateway } from "../embeddings/Gateway.ts"

const model = "acme/rerank"
const query = "how do rivers form deltas"
const documents = ["Bread rises with yeast.", "Rivers form deltas where they slow down.", "Deltas form at river mouths."]

describe("@openrouter/sdk against Switchyard: rerank", () => {
  let gateway: Gateway
  let cohere: FakeUpstream.FakeServer
  let jina: FakeUpstream.FakeServer
  let client: OpenRouter

  beforeAll(async () => {
    cohere = await FakeCohere.start({ apiKey: "sk-fake" })
    jina = await FakeOpenAi.start({ apiKey: "sk-fake" })
    const endpoint = { model, upstream_model: "acme-rerank", task: "rerank" }
    gateway = await startGateway({
      credits: 10,
      config: {
        providers: [
          {
            slug: "alpha", name: "Alpha", adapter: "cohere", base_url: cohere.url, api_key_env: "ALPHA_API_KEY",
            data_collection: "deny", zdr: true, endpoints: [{ ...endpoint, pricing: { search: "2" } }]
          },
          {
            slug: "beta", name: "Beta", adapter: "openai", base_url: jina.url, api_key_env: "BETA_API_KEY",
            data_collection: "allow", endpoints: [{ ...endpoint, pricing: { prompt: "0.02" } }]
          }
        ]
      }
    })
    client = new OpenRouter({ apiKey: gateway.server.apiKey, serverURL: gateway.server.baseUrl, retryConfig: { strategy: "none" } })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all([cohere.close(), jina.close()])
  })

  it("rerank.rerank passes the SDK's response validation, best first, and its provider preferences steer the route", async () => {
    const response = await client.rerank.rerank({
      requestBody: { model, query, documents, topN: 2, provider: { zdr: true }, sessionId: "s-1", user: "u-1" }
    })
    if (typeof response === "string") throw new Error(`expected JSON, got ${response}`)
    assert.strictEqual(response.model, model)
    assert.strictEqual(response.provider, "alpha")
    assert.strictEqual(response.results.length, 2)
    assert.isAtLeast(response.results[0]!.relevanceScore, response.results[1]!.relevanceScore)
    assert.include([1, 2], response.results[0]!.index)
    assert.strictEqual(response.usage?.searchUnits, 1)
    assert.strictEqual(response.usage?.cost, 0.002)

    const other = await client.rerank.rerank({
      requestBody: { model, query, documents: documents.map((text) => ({ text })), provider: { sort: "price", dataCollection: "allow" } }
    })
    if (typeof other === "string") throw new Error(`expected JSON, got ${other}`)
    assert.strictEqual(other.provider, "beta")
    assert.strictEqual(other.results.length, 3)
    assert.isAbove(other.usage?.totalTokens ?? 0, 0)
  })
})
