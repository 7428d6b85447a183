import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import OpenAI from "openai"
import { OpenRouter } from "@openrouter/sdk"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { costOf, type Gateway, lastBody, startGateway } from "../embeddings/Gateway.ts"
import { storeKind } from "../support/TestServer.ts"

// A new operator's first run: a fresh store, a config file with one OpenAI-compatible provider
// (an upstream that, like OpenAI's own API, takes strings and token ids only), no credits added.
describe(`a fresh install with one OpenAI-compatible provider (${storeKind})`, () => {
  let upstream: FakeUpstream.FakeServer
  let gateway: Gateway
  let openai: OpenAI

  beforeAll(async () => {
    upstream = await FakeOpenAi.start({ textOnly: true })
    gateway = await startGateway({
      config: {
        providers: [{
          slug: "upstream",
          name: "Upstream",
          adapter: "openai",
          base_url: upstream.url,
          api_key_env: "UPSTREAM_API_KEY",
          data_collection: "deny",
          endpoints: [
            {
              model: "openai/text-embedding-3-small",
              upstream_model: "text-embedding-3-small",
              pricing: { prompt: "0.02" },
              dimensions: 1536,
              supported_parameters: ["dimensions", "encoding_format", "user"],
              max_batch_items: 2048
            },
            { model: "vendor-a/shared-embed", upstream_model: "shared", pricing: { prompt: "0.01" }, dimensions: 16, max_batch_items: 16 },
            { model: "vendor-b/shared-embed", upstream_model: "shared", pricing: { prompt: "0.01" }, dimensions: 16, max_batch_items: 16 }
          ]
        }]
      }
    })
    openai = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
  })
  afterAll(async () => {
    await gateway.close()
    await upstream.close()
  })

  const model = "openai/text-embedding-3-small"

  it("serves a paid model to the openai SDK with no credit step: text, token ids and text-only multimodal input", async () => {
    const text = await openai.embeddings.create({ model, input: ["hello world", "second"] })
    assert.strictEqual(text.data.length, 2)
    assert.strictEqual(text.data[0]!.embedding.length, 1536)
    assert.propertyVal(text.usage, "cost", costOf(3, "0.02"))

    const ids = await openai.embeddings.create({ model, input: [[15339, 1917], [5686]] })
    assert.strictEqual(ids.data.length, 2)
    assert.deepStrictEqual(lastBody(upstream).input, [[15339, 1917], [5686]])
    const single = await openai.embeddings.create({ model, input: [15339, 1917] })
    assert.strictEqual(single.data.length, 1)

    const parts = [{ content: [{ type: "text", text: "a title" }, { type: "text", text: "a body" }] }, { content: [{ type: "text", text: "another" }] }]
    const multimodal = await openai.embeddings.create({ model, input: parts as never })
    assert.strictEqual(multimodal.data.length, 2)
    assert.deepStrictEqual(lastBody(upstream).input, ["a title\na body", "another"])

    const credits = await gateway.call("/credits", undefined, { key: gateway.server.managementKey })
    assert.strictEqual(credits.json.data.total_credits, 0)
    assert.isAbove(credits.json.data.total_usage, 0)
  })

  it("resolves a model named without its vendor, and refuses an ambiguous one naming the candidates", async () => {
    const bare = await openai.embeddings.create({ model: "text-embedding-3-small", input: "hello", encoding_format: "float" })
    assert.strictEqual(bare.model, model)
    assert.strictEqual(bare.data[0]!.embedding.length, 1536)

    const ambiguous = await openai.embeddings.create({ model: "shared-embed", input: "hello" }).then(() => undefined, (e: unknown) => e)
    assert.instanceOf(ambiguous, OpenAI.BadRequestError)
    assert.include((ambiguous as Error).message, "vendor-a/shared-embed, vendor-b/shared-embed")

    const unknown = await openai.embeddings.create({ model: "no-such-model", input: "hello" }).then(() => undefined, (e: unknown) => e)
    assert.instanceOf(unknown, OpenAI.NotFoundError)
  })

  it("lists the served models to the openai SDK and to @openrouter/sdk, through their own validation", async () => {
    const ids: Array<string> = []
    for await (const m of openai.models.list()) ids.push(m.id)
    assert.includeMembers(ids, [model, "switchyard/local-embed", "vendor-a/shared-embed"])

    const openrouter = new OpenRouter({ apiKey: gateway.server.apiKey, serverURL: gateway.server.baseUrl, retryConfig: { strategy: "none" } })
    const page = await openrouter.models.list()
    const listed = page.result.data.find((m) => m.id === model)!
    assert.strictEqual(page.result.totalCount, 4)
    assert.strictEqual(listed.pricing.prompt, "0.00000002")
    assert.sameMembers(listed.architecture.inputModalities as Array<string>, ["text"])
    assert.deepStrictEqual(listed.architecture.outputModalities, ["embeddings"])
  })

  it("refuses a max_price number with a 400 naming the field", async () => {
    const reply = await gateway.embed({ model, input: "x", provider: { max_price: { prompt: 0.05 } } })
    assert.strictEqual(reply.status, 400, reply.text)
    assert.include(reply.json.error.message, "provider.max_price.prompt")
    const string = await gateway.embed({ model, input: "x", provider: { max_price: { prompt: "0.05" } } })
    assert.strictEqual(string.status, 200, string.text)
  })
})
