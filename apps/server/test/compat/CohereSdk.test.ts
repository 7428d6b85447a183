import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { CohereClient, CohereClientV2, CohereError } from "cohere-ai"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeRerank from "../fakes/FakeRerank.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { type Gateway, startGateway } from "../embeddings/Gateway.ts"

const query = "how do rivers form deltas"
const documents = ["Bread rises with yeast.", "Rivers form deltas where they slow down.", "Deltas form at river mouths."]

const best = (docs: ReadonlyArray<string>) =>
  docs.map((d, index) => ({ index, relevance_score: FakeRerank.scoreOf(query, d) }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)

describe("cohere-ai SDK against Switchyard: rerank and embed under the base URL http://host/api", () => {
  let gateway: Gateway
  let cohere: FakeUpstream.FakeServer
  let openai: FakeUpstream.FakeServer
  let base: string

  beforeAll(async () => {
    cohere = await FakeCohere.start({ apiKey: "sk-fake", maxTokens: 8 })
    openai = await FakeOpenAi.start({ defaultWidth: 512 })
    gateway = await startGateway({
      credits: 10,
      config: {
        providers: [{
          slug: "alpha", name: "Alpha", adapter: "cohere", base_url: cohere.url, api_key_env: "ALPHA_API_KEY", data_collection: "deny",
          endpoints: [{
            model: "cohere/rerank-v3.5", upstream_model: "rerank-v3.5", task: "rerank", pricing: { search: "2" },
            supported_parameters: ["max_tokens_per_doc"]
          }, {
            model: "cohere/embed-v4.0", upstream_model: "embed-v4.0", pricing: { prompt: "0.12" }, dimensions: 1536, max_batch_items: 96,
            supported_parameters: ["dimensions", "input_type"], matryoshka: [256, 512, 1024, 1536], output_dtypes: ["int8", "uint8", "binary", "ubinary"],
            max_input_tokens: 8
          }]
        }, {
          // A model no Cohere serves: an OpenAI-compatible host without types, dimensions or truncation of its own.
          slug: "beta", name: "Beta", adapter: "openai", base_url: openai.url, api_key_env: "BETA_API_KEY", data_collection: "deny",
          endpoints: [{ model: "acme/embed", upstream_model: "embed", pricing: { prompt: "0.01" }, dimensions: 512, max_batch_items: 64, matryoshka: true, max_input_tokens: 8 }]
        }]
      }
    })
    base = `${gateway.server.origin}/api`
  })
  afterAll(async () => {
    await gateway.close()
    await cohere.close()
    await openai.close()
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

  it("CohereClientV2.embed: several embedding types in one answer, output_dimension and truncate, from Cohere and from another provider", async () => {
    const client = new CohereClientV2({ token: gateway.server.apiKey, baseUrl: base, maxRetries: 0 })
    const texts = ["rivers form deltas", "bread rises with yeast"]
    for (const model of ["embed-v4.0", "acme/embed"]) {
      const both = await client.embed({ model, inputType: "search_document", texts, embeddingTypes: ["int8", "binary"], outputDimension: 256, truncate: "END" })
      assert.match(both.id, /^gen-emb-/u)
      assert.deepStrictEqual(both.embeddings.int8?.map((v) => v.length), [256, 256], model)
      assert.deepStrictEqual(both.embeddings.binary?.map((v) => v.length), [32, 32], model)
      assert.isUndefined(both.embeddings.float)
      assert.isAbove(both.meta?.billedUnits?.inputTokens ?? 0, 0)
    }
    // One type alone is Cohere's own where Cohere serves: its int8 of its 256 floats.
    const native = await client.embed({ model: "embed-v4.0", inputType: "search_query", texts: ["rivers"], embeddingTypes: ["int8"], outputDimension: 256 })
    assert.deepStrictEqual(native.embeddings.int8?.[0], FakeUpstream.scaled(FakeUpstream.vectorFor("embed-v4.0|search_query|rivers", 256), false))
    const sent = cohere.requests.at(-1)!.body as Record<string, unknown>
    assert.deepStrictEqual([sent.embedding_types, sent.output_dimension, sent.truncate], [["int8"], 256, "END"])
    // A long text: cut at its end by default, refused with truncate NONE.
    const longText = "one two three four five six seven eight nine ten eleven twelve"
    const cut = await client.embed({ model: "embed-v4.0", inputType: "search_document", texts: [longText], embeddingTypes: ["float"] })
    assert.strictEqual(cut.embeddings.float?.[0]?.length, 1536)
    const refused = await client.embed({ model: "embed-v4.0", inputType: "search_document", texts: [longText], embeddingTypes: ["float"], truncate: "NONE" })
      .then(() => undefined, (e: unknown) => e)
    assert.instanceOf(refused, CohereError)
    assert.strictEqual((refused as CohereError).statusCode, 400)
    assert.include(JSON.stringify((refused as CohereError).body), "takes at most 8")
  })

  it("CohereClient (v1).embed answers floats as embeddings_floats, and by type when asked", async () => {
    const client = new CohereClient({ token: gateway.server.apiKey, baseUrl: base, maxRetries: 0 })
    const floats = await client.embed({ model: "cohere/embed-v4.0", texts: ["a b"], inputType: "search_document" })
    assert.strictEqual(floats.responseType, "embeddings_floats")
    assert.strictEqual((floats.embeddings as Array<Array<number>>)[0]!.length, 1536)
    const typed = await client.embed({ model: "acme/embed", texts: ["a b"], embeddingTypes: ["ubinary", "float"] })
    assert.strictEqual(typed.responseType, "embeddings_by_type")
    const byType = typed.embeddings as { ubinary?: Array<Array<number>>; float?: Array<Array<number>> }
    assert.strictEqual(byType.float?.[0]?.length, 512)
    assert.deepStrictEqual(byType.ubinary?.[0], FakeUpstream.packed(byType.float![0]!, false))
  })
})
