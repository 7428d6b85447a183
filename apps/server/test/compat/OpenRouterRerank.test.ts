import { OpenRouter } from "@openrouter/sdk"
import * as SdkErrors from "@openrouter/sdk/models/errors"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { type Gateway, startGateway } from "../embeddings/Gateway.ts"

const model = "acme/rerank"
const query = "how do rivers form deltas"
const documents = ["Bread rises with yeast.", "Rivers form deltas where they slow down.", "Deltas form at river mouths."]
const visionModel = "acme/vision-rerank"
const image = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

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
            data_collection: "deny", zdr: true,
            endpoints: [{ ...endpoint, pricing: { search: "2" } }, { ...endpoint, model: visionModel, pricing: { search: "1" } }]
          },
          {
            slug: "beta", name: "Beta", adapter: "openai", base_url: jina.url, api_key_env: "BETA_API_KEY",
            data_collection: "allow",
            endpoints: [
              { ...endpoint, pricing: { prompt: "0.02" } },
              { ...endpoint, model: visionModel, upstream_model: "acme-rerank-m0", input_modalities: ["text", "image"], pricing: { prompt: "0.02" } }
            ]
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

  it("every result carries its document, as OpenRouter answers (the SDK cannot send return_documents)", async () => {
    const response = await client.rerank.rerank({ requestBody: { model, query, documents: [documents[0]!, { text: documents[1]! }] } })
    if (typeof response === "string") throw new Error(`expected JSON, got ${response}`)
    assert.deepStrictEqual(
      response.results.map((r) => [r.index, r.document]),
      [[1, { text: documents[1] }], [0, { text: documents[0] }]]
    )
  })

  it("image documents reach only an endpoint that takes images, image and text kept, and come back in the results", async () => {
    const before = jina.requests.length
    const response = await client.rerank.rerank({
      requestBody: { model: visionModel, query, documents: [{ image }, { text: documents[1]!, image }, documents[2]!] }
    })
    if (typeof response === "string") throw new Error(`expected JSON, got ${response}`)
    assert.strictEqual(response.provider, "beta")
    const sent = jina.requests.slice(before).map((r) => (r.body as { model: string; documents: unknown }))
    assert.deepStrictEqual(sent.map((b) => b.model), ["acme-rerank-m0"])
    assert.deepStrictEqual(sent[0]!.documents, [{ image }, { text: documents[1], image }, { text: documents[2] }])
    const byIndex = new Map(response.results.map((r) => [r.index, r.document]))
    assert.deepStrictEqual(byIndex.get(0), { image })
    assert.deepStrictEqual(byIndex.get(1), { text: documents[1], image })
    // Text alone still goes to the cheaper text-only endpoint too.
    const textOnly = await client.rerank.rerank({ requestBody: { model: visionModel, query, documents, provider: { order: ["alpha"] } } })
    if (typeof textOnly === "string") throw new Error(`expected JSON, got ${textOnly}`)
    assert.strictEqual(textOnly.provider, "alpha")
  })

  it("an image is never sent as text alone: 404 naming the reason when preferences leave only text endpoints, 400 when the model takes no images", async () => {
    const sentBefore = cohere.requests.length + jina.requests.length
    const pinned = await client.rerank.rerank({
      requestBody: { model: visionModel, query, documents: [{ text: documents[1]!, image }], provider: { only: ["alpha"] } }
    }).then(() => undefined, (e: unknown) => e)
    assert.instanceOf(pinned, SdkErrors.NotFoundResponseError)
    assert.include((pinned as Error).message, "does not accept image input")

    const textModel = await client.rerank.rerank({ requestBody: { model, query, documents: [{ text: documents[1]!, image }] } })
      .then(() => undefined, (e: unknown) => e)
    assert.instanceOf(textModel, SdkErrors.BadRequestResponseError)
    assert.include((textModel as Error).message, `Model "${model}" takes no image documents`)
    assert.strictEqual(cohere.requests.length + jina.requests.length, sentBefore)
  })
})
