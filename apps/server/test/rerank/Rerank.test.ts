import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeRerank from "../fakes/FakeRerank.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVoyage from "../fakes/FakeVoyage.ts"
import { costOf, type Gateway, startGateway } from "../embeddings/Gateway.ts"
import { call, type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

const model = "acme/rerank"
const query = "how do rivers form deltas"

// 250 documents; a few mention the query's words, so the best ones are known in advance.
const corpus = Array.from({ length: 250 }, (_, i) =>
  i % 50 === 7 ? `Rivers form deltas where they slow down, document ${i}` : i % 25 === 3 ? `Deltas of rivers, note ${i}` : `Unrelated note number ${i} about bread`
)

const expected = (docs: ReadonlyArray<string>) =>
  docs.map((d, index) => ({ index, relevance_score: FakeRerank.scoreOf(query, d) }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)

const rerankEndpoint = (facts: Record<string, unknown>) => ({
  model,
  upstream_model: "acme-rerank-1",
  task: "rerank",
  supported_parameters: ["max_tokens_per_doc"],
  ...facts
})

describe(`POST /rerank (${storeKind})`, () => {
  let cohere: FakeUpstream.FakeServer
  let voyage: FakeUpstream.FakeServer
  let jina: FakeUpstream.FakeServer
  let gateway: Gateway

  beforeAll(async () => {
    // Each fake refuses calls larger than the endpoint's max_documents, so a missing split fails.
    cohere = await FakeCohere.start({ apiKey: "sk-fake", maxDocuments: 100 })
    voyage = await FakeVoyage.start({ apiKey: "sk-fake", maxDocuments: 1000 })
    jina = await FakeOpenAi.start({ apiKey: "sk-fake", maxDocuments: 1000 })
    gateway = await startGateway({
      credits: 10,
      config: {
        providers: [
          {
            slug: "alpha", name: "Alpha", adapter: "cohere", base_url: cohere.url, api_key_env: "ALPHA_API_KEY",
            data_collection: "deny", zdr: true,
            endpoints: [rerankEndpoint({ pricing: { search: "2" }, max_documents: 100 })]
          },
          {
            slug: "beta", name: "Beta", adapter: "voyage", base_url: voyage.url, api_key_env: "BETA_API_KEY",
            data_collection: "allow",
            endpoints: [rerankEndpoint({ pricing: { prompt: "0.05" }, supported_parameters: [] })]
          },
          {
            slug: "gamma", name: "Gamma", adapter: "jina", base_url: jina.url, api_key_env: "GAMMA_API_KEY",
            data_collection: "deny",
            endpoints: [
              rerankEndpoint({ pricing: { prompt: "0.02" }, quantization: "fp16" }),
              { model: "acme/embed", upstream_model: "acme-embed", pricing: { prompt: "0.01" }, dimensions: 16, max_batch_items: 64 }
            ]
          }
        ]
      }
    })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all([cohere.close(), voyage.close(), jina.close()])
  })

  const rerank = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    gateway.call("/rerank", { model, query, ...body }, { headers })

  it("splits 250 documents over a 100-document endpoint and merges them best first, indexed into the request", async () => {
    const before = cohere.requests.length
    const reply = await rerank({ documents: corpus, provider: { order: ["alpha"] }, top_n: 10, return_documents: true })
    assert.strictEqual(reply.status, 200, reply.text)
    const calls = cohere.requests.slice(before)
    assert.deepStrictEqual(calls.map((r) => (r.body as { documents: Array<string> }).documents.length), [100, 100, 50])
    const best = expected(corpus).slice(0, 10)
    assert.deepStrictEqual(reply.json.results, best.map((r) => ({ ...r, document: { text: corpus[r.index] } })))
    assert.strictEqual(reply.json.provider, "alpha")
    assert.strictEqual(reply.json.model, model)
    assert.match(reply.json.id, /^gen-/u)
    // One search unit per call of up to 100 documents; $2 per 1,000 searches.
    assert.strictEqual(reply.json.usage.search_units, 3)
    assert.strictEqual(reply.json.usage.cost, 0.006)
    assert.isFalse(reply.json.usage.is_byok)
    assert.strictEqual(reply.headers.get("x-generation-id"), reply.json.id)
  })

  it("takes documents as strings or { text } objects and answers each with its document, unless return_documents is false", async () => {
    const documents = ["bread", { text: "rivers form deltas" }]
    const reply = await rerank({ documents, provider: { order: ["gamma"] } })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(reply.json.results.map((r: { index: number }) => r.index), [1, 0])
    assert.deepStrictEqual(reply.json.results.map((r: { document: unknown }) => r.document), [{ text: "rivers form deltas" }, { text: "bread" }])
    const without = await rerank({ documents, provider: { order: ["gamma"] }, return_documents: false })
    assert.strictEqual(without.status, 200, without.text)
    assert.deepStrictEqual(without.json.results.map((r: { document: unknown }) => r.document), [{}, {}])
  })

  it("an image document is a 400 naming the documents when no endpoint of the model takes images, and nothing is sent", async () => {
    const before = cohere.requests.length + voyage.requests.length + jina.requests.length
    const image = "https://example.com/delta.png"
    const replies = [
      await rerank({ documents: ["rivers", { text: "a delta", image }] }),
      await gateway.call("/rerank/plan", { model, query, documents: [{ image }] })
    ]
    for (const reply of replies) {
      assert.strictEqual(reply.status, 400, reply.text)
      assert.include(reply.json.error.message, `Model "${model}" takes no image documents`)
      assert.strictEqual(reply.json.error.metadata.field, "documents")
    }
    assert.strictEqual(cohere.requests.length + voyage.requests.length + jina.requests.length, before)
    const empty = await rerank({ documents: [{}] })
    assert.strictEqual(empty.status, 400, empty.text)
  })

  it("falls back from a failing provider to the next and reports both attempts", async () => {
    voyage.setBehaviour({ _tag: "Status", status: 503 })
    try {
      const reply = await rerank(
        { documents: ["rivers", "bread"], provider: { order: ["beta", "gamma"], allow_fallbacks: true } },
        { "x-switchyard-explain": "true" }
      )
      assert.strictEqual(reply.status, 200, reply.text)
      assert.strictEqual(reply.json.provider, "gamma")
      const tried = reply.json.switchyard.routing.tried as Array<{ provider: string; outcome: string }>
      assert.deepStrictEqual(tried.map((t) => [t.provider, t.outcome]), [["beta", "failure"], ["gamma", "success"]])
    } finally {
      voyage.setBehaviour({ _tag: "Normal" })
    }
  })

  it("filters rerank endpoints by every preference, and explains each exclusion", async () => {
    const documents = ["rivers", "bread"]
    const served = async (provider: Record<string, unknown>) => {
      const reply = await rerank({ documents, provider }, { "x-switchyard-explain": "1" })
      assert.strictEqual(reply.status, 200, reply.text)
      return reply.json.provider as string
    }
    assert.strictEqual(await served({ only: ["beta"] }), "beta")
    assert.strictEqual(await served({ ignore: ["alpha", "gamma"] }), "beta")
    assert.strictEqual(await served({ data_collection: "deny", sort: "price", ignore: ["gamma"] }), "alpha")
    assert.strictEqual(await served({ zdr: true }), "alpha")
    assert.strictEqual(await served({ quantizations: ["fp16"] }), "gamma")
    assert.strictEqual(await served({ sort: "price" }), "gamma")
    // beta failed in the test before (inside its outage window it would go last): pinned here.
    assert.strictEqual(await served({ max_price: { search: "1" }, order: ["alpha", "beta"], allow_fallbacks: false }), "beta")
    assert.strictEqual(await served({ max_price: { prompt: "0.03" }, ignore: ["alpha"] }), "gamma")

    // max_tokens_per_doc with require_parameters leaves out the endpoint that does not take it.
    const required = await rerank(
      { documents, max_tokens_per_doc: 64, provider: { require_parameters: true, only: ["beta"] } },
      { "x-switchyard-explain": "1" }
    )
    assert.strictEqual(required.status, 404, required.text)
    const reasons = required.json.error.metadata.candidates as Array<{ provider: string; excluded_by?: string }>
    assert.strictEqual(reasons.find((c) => c.provider === "beta")?.excluded_by, "require_parameters")
    // Without it, the parameter is left out for that endpoint and named.
    const soft = await rerank({ documents, max_tokens_per_doc: 64, provider: { only: ["beta"] } })
    assert.strictEqual(soft.status, 200, soft.text)
    assert.deepStrictEqual(soft.json.switchyard.ignored_parameters, ["max_tokens_per_doc"])
    assert.notProperty(voyage.requests.at(-1)!.body as object, "max_tokens_per_doc")
  })

  it("POST /rerank/plan gives the route and the worst case without calling any provider", async () => {
    const before = cohere.requests.length + voyage.requests.length + jina.requests.length
    const reply = await gateway.call("/rerank/plan", { model, query, documents: corpus, provider: { order: ["alpha"], allow_fallbacks: false } })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(reply.json.object, "rerank.plan")
    assert.deepStrictEqual(reply.json.attempts, ["alpha/default@acme/rerank"])
    // Three calls of up to 100 documents, each within one search unit: at most $0.006.
    assert.strictEqual(reply.json.estimate.cost, 0.006)
    assert.strictEqual(cohere.requests.length + voyage.requests.length + jina.requests.length, before)
  })

  it("draws the same route for the same seed", async () => {
    const documents = ["rivers", "bread"]
    const first = await rerank({ documents }, { "x-switchyard-seed": "42" })
    const again = await rerank({ documents }, { "x-switchyard-seed": "42" })
    assert.strictEqual(first.status, 200, first.text)
    assert.strictEqual(first.json.provider, again.json.provider)
    assert.strictEqual(first.headers.get("x-switchyard-seed"), "42")
  })

  it("writes one ledger row: GET /generation and the key's usage show the rerank's cost", async () => {
    const admin = { key: gateway.server.managementKey }
    const before = (await gateway.call("/key", undefined)).json.data.usage as number
    const reply = await rerank({ documents: ["rivers form deltas", "bread"], provider: { order: ["beta"], allow_fallbacks: false } })
    assert.strictEqual(reply.status, 200, reply.text)
    const tokens = reply.json.usage.total_tokens as number
    assert.isAbove(tokens, 0)
    assert.strictEqual(reply.json.usage.cost, costOf(tokens, "0.05"))
    const generation = await gateway.call(`/generation?id=${reply.json.id}`, undefined)
    assert.strictEqual(generation.status, 200, generation.text)
    assert.strictEqual(generation.json.data.model, model)
    assert.strictEqual(generation.json.data.provider_name, "Beta")
    assert.strictEqual(generation.json.data.api_type, "rerank")
    assert.strictEqual(generation.json.data.total_cost, reply.json.usage.cost)
    assert.strictEqual(generation.json.data.native_tokens_prompt, tokens)
    const after = (await gateway.call("/key", undefined)).json.data.usage as number
    assert.closeTo(after - before, reply.json.usage.cost, 1e-12)
    const keys = await gateway.call("/keys", undefined, admin)
    assert.strictEqual(keys.status, 200)
  })

  it("names the task in the metrics", async () => {
    const reply = await rerank({ documents: ["rivers", "bread"], provider: { order: ["gamma"] } })
    assert.strictEqual(reply.status, 200, reply.text)
    const metrics = await (await fetch(`${gateway.server.origin}/metrics`)).text()
    assert.match(metrics, /switchyard_tokens_total\{task="rerank",model="acme\/rerank",provider="gamma"\} \d+/u)
    assert.match(metrics, /switchyard_cost_usd_total\{task="rerank",model="acme\/rerank",provider="gamma",byok="false"\}/u)
  })

  it("answers 402 at a workspace budget and sends nothing upstream", async () => {
    const admin = { key: gateway.server.managementKey }
    const id = (await gateway.call("/key", undefined, admin)).json.data.workspace_id as string
    const set = await gateway.call(`/workspaces/${id}/budgets/daily`, { limit_usd: 0.000001 }, { ...admin, method: "PUT" })
    assert.strictEqual(set.status, 200, set.text)
    try {
      const before = cohere.requests.length
      const reply = await rerank({ documents: corpus, provider: { order: ["alpha"] } })
      assert.strictEqual(reply.status, 402, reply.text)
      assert.strictEqual(reply.json.error.metadata.reason, "workspace_budget")
      assert.strictEqual(cohere.requests.length, before)
    } finally {
      await gateway.call(`/workspaces/${id}/budgets/daily`, undefined, { ...admin, method: "DELETE" })
    }
  })

  it("a workspace's own provider key (BYOK) serves a rerank, and its ledger row says so", async () => {
    const admin = { key: gateway.server.managementKey }
    const created = await gateway.call("/byok", { provider: "beta", key: "sk-fake" }, admin)
    assert.strictEqual(created.status, 201, created.text)
    try {
      const reply = await rerank({ documents: ["rivers", "bread"], provider: { only: ["beta"] } })
      assert.strictEqual(reply.status, 200, reply.text)
      assert.isTrue(reply.json.usage.is_byok)
      const generation = await gateway.call(`/generation?id=${reply.json.id}`, undefined)
      assert.isTrue(generation.json.data.is_byok)
    } finally {
      await gateway.call(`/byok/${created.json.data.id}`, undefined, { ...admin, method: "DELETE" })
    }
  })

  it("a model of the other task is a 400 that names its task", async () => {
    const asEmbedding = await gateway.embed({ model, input: "hello" })
    assert.strictEqual(asEmbedding.status, 400, asEmbedding.text)
    assert.include(asEmbedding.json.error.message, "is a rerank model, not an embeddings model")
    assert.strictEqual(asEmbedding.json.error.metadata.task, "rerank")
    const asRerank = await gateway.call("/rerank", { model: "acme/embed", query, documents: ["a"] })
    assert.strictEqual(asRerank.status, 400, asRerank.text)
    assert.include(asRerank.json.error.message, "is an embeddings model, not a rerank model")
  })

  it("refuses an x-session-id over 256 characters on /rerank and /rerank/plan, as /embeddings does", async () => {
    const long = { "x-session-id": "s".repeat(257) }
    for (const path of ["/rerank", "/rerank/plan"]) {
      const reply = await gateway.call(path, { model, query, documents: ["a"] }, { headers: long })
      assert.strictEqual(reply.status, 400, `${path}: ${reply.text}`)
      assert.include(reply.json.error.message, "x-session-id must be at most 256 characters")
      assert.strictEqual(reply.json.error.metadata.field, "x-session-id")
    }
    const fits = await gateway.call("/rerank/plan", { model, query, documents: ["a"] }, { headers: { "x-session-id": "é".repeat(256) } })
    assert.strictEqual(fits.status, 200, fits.text)
  })

  it("refuses a malformed body with a 400 naming the field", async () => {
    for (const body of [{ documents: [] }, { documents: ["a"], top_n: 0 }, { documents: [1] }, { documents: ["a"], query: "" }]) {
      const reply = await gateway.call("/rerank", { model, query, ...body })
      assert.strictEqual(reply.status, 400, reply.text)
      assert.isString(reply.json.error.message)
    }
  })
})

describe(`POST /rerank on a fresh install (${storeKind})`, () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("switchyard/local-rerank ranks the relevant documents first, with no credentials and at no cost", async () => {
    const documents = [
      "The recipe needs flour, butter and two eggs.",
      "Plants use sunlight to make sugar through photosynthesis.",
      "The train leaves the station at nine."
    ]
    const reply = await call(server, "POST", "/rerank", server.apiKey, {
      model: "switchyard/local-rerank",
      query: "how do plants make sugar from sunlight",
      documents,
      top_n: 2,
      return_documents: true
    })
    assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
    assert.strictEqual(reply.body.provider, "local")
    assert.strictEqual(reply.body.results.length, 2)
    assert.strictEqual(reply.body.results[0].index, 1)
    assert.strictEqual(reply.body.results[0].document.text, documents[1])
    assert.isAbove(reply.body.results[0].relevance_score, reply.body.results[1].relevance_score)
    assert.strictEqual(reply.body.usage.cost, 0)
    assert.isAbove(reply.body.usage.total_tokens, 0)
  })

  it("GET /rerank/models lists the rerank models an install serves; the embeddings listing does not", async () => {
    const rerank = await call(server, "GET", "/rerank/models", server.apiKey)
    assert.strictEqual(rerank.status, 200)
    assert.deepStrictEqual(rerank.body.data.map((m: { id: string }) => m.id), ["switchyard/local-rerank"])
    assert.deepStrictEqual(rerank.body.data[0].architecture.output_modalities, ["rerank"])
    const embeddings = await call(server, "GET", "/embeddings/models", server.apiKey)
    assert.notInclude(embeddings.body.data.map((m: { id: string }) => m.id), "switchyard/local-rerank")
  })
})

describe(`POST /rerank at a provider that reports no usage (${storeKind})`, () => {
  let silent: FakeUpstream.FakeServer
  let gateway: Gateway
  beforeAll(async () => {
    silent = await FakeOpenAi.start({ apiKey: "sk-fake", reportUsage: false })
    gateway = await startGateway({
      credits: 10,
      config: {
        providers: [{
          slug: "delta", name: "Delta", adapter: "openai", base_url: silent.url, api_key_env: "DELTA_API_KEY", data_collection: "deny",
          endpoints: [rerankEndpoint({ pricing: { prompt: "1" } })]
        }]
      }
    })
  })
  afterAll(async () => {
    await gateway.close()
    await silent.close()
  })

  it("bills the gateway's own count, the query once per document plus the documents, and /activity shows the row", async () => {
    const documents = ["rivers form deltas", "bread rises"]
    const reply = await gateway.call("/rerank", { model, query: "rivers and deltas", documents })
    assert.strictEqual(reply.status, 200, reply.text)
    // Words and punctuation: the query is 3 tokens, the documents 3 and 2.
    assert.strictEqual(reply.json.usage.total_tokens, 3 + 3 + 3 + 2)
    assert.strictEqual(reply.json.usage.cost, costOf(11, "1"))
    const activity = await gateway.call("/activity", undefined, { key: gateway.server.managementKey })
    const row = activity.json.data.find((r: { model: string }) => r.model === model)
    assert.strictEqual(row.requests, 1)
    assert.strictEqual(row.usage, costOf(11, "1"))
  })
})
