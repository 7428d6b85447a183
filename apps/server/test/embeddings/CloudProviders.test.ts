import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeAzureOpenAi from "../fakes/FakeAzureOpenAi.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVertex from "../fakes/FakeVertex.ts"
import { capturingStdout } from "../support/CapturedOutput.ts"
import { endpoint, type Gateway, provider, startGateway } from "./Gateway.ts"

const model = "openai/text-embedding-3-small"
const badKey = "azure-key-the-fake-refuses-4242"

describe("Azure OpenAI and Vertex AI behind the gateway", () => {
  let gateway: Gateway
  let azure: FakeAzureOpenAi.FakeAzure
  let openai: FakeUpstream.FakeServer
  let vertex: FakeVertex.FakeVertex
  let savedMetadataHost: string | undefined

  beforeAll(async () => {
    azure = await FakeAzureOpenAi.start({ apiKey: "sk-fake", deployments: { "embed-small": "text-embedding-3-small" }, defaultWidth: 16 })
    openai = await FakeOpenAi.start()
    vertex = await FakeVertex.start({ defaultWidth: 16 })
    // The gateway runs in this process and google-auth-library reads the process's environment.
    savedMetadataHost = process.env.GCE_METADATA_HOST
    process.env.GCE_METADATA_HOST = vertex.host
    const deployment = endpoint(model, { upstream_model: "embed-small" })
    gateway = await startGateway({
      config: {
        providers: [
          provider("azure", azure.url, { adapter: "azure", api_version: "2024-10-21" }, [deployment]),
          provider("azurebad", azure.url, { adapter: "azure", api_version: "2024-10-21" }, [endpoint("acme/refused", { upstream_model: "embed-small" })]),
          provider("openai", openai.url, {}, [endpoint(model, { upstream_model: "te3-small" })]),
          {
            ...provider("google-vertex", vertex.url, { adapter: "vertex", project: "fake-project", location: "us-central1" }, [
              endpoint("google/text-embedding-005", { upstream_model: "text-embedding-005" }),
              { model: "google/semantic-ranker", upstream_model: "semantic-ranker-default@latest", task: "rerank", pricing: { request: "0.001" } }
            ]),
            api_key_env: null
          }
        ],
        workspaces: { default: { cache: false } }
      },
      env: { AZUREBAD_API_KEY: badKey, GCE_METADATA_HOST: vertex.host },
      credits: 100
    })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all([azure.close(), openai.close(), vertex.close()])
    if (savedMetadataHost === undefined) delete process.env.GCE_METADATA_HOST
    else process.env.GCE_METADATA_HOST = savedMetadataHost
  })

  it("embeds through an Azure deployment with the right vectors, usage and cost", async () => {
    const reply = await gateway.embed({ model, input: ["one two", "three"], provider: { only: ["azure"] } })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(reply.json.data[1].embedding, FakeUpstream.vectorFor("text-embedding-3-small|three", 16))
    assert.strictEqual(reply.json.usage.prompt_tokens, 3)
    assert.isAbove(Number(reply.json.usage.cost), 0)
    assert.strictEqual(azure.requests.at(-1)!.path, "/openai/deployments/embed-small/embeddings?api-version=2024-10-21")
  })

  it("a 503 from Azure falls back to OpenAI for the same model, both calls in /generation", async () => {
    azure.setBehaviour([{ _tag: "Status", status: 503 }])
    const reply = await gateway.embed({ model, input: "fails over", provider: { order: ["azure", "openai"] } })
    assert.strictEqual(reply.status, 200, reply.text)
    const generation = await gateway.call(`/generation?id=${reply.json.id}`)
    const responses = generation.json.data.provider_responses as Array<{ provider_name: string; status: number }>
    assert.deepStrictEqual(responses.map((r) => [r.provider_name, r.status]), [["azure", 503], ["openai", 200]])
  })

  it("a key Azure refuses is a 401-class refusal naming the provider, the key nowhere in the answer or the log", async () => {
    const { result: reply, text } = await capturingStdout(() => gateway.embed({ model: "acme/refused", input: "x" }))
    assert.strictEqual(reply.status, 502, reply.text)
    assert.include(reply.json.error.message, "\"azurebad\"")
    assert.include(reply.json.error.message, "rejected the gateway's credentials")
    assert.strictEqual(reply.json.error.metadata.upstream_status, 401)
    assert.notInclude(reply.text, badKey)
    assert.notInclude(text, badKey)
  })

  it("embeds and reranks through Vertex AI with the metadata server's token", async () => {
    const reply = await gateway.embed({ model: "google/text-embedding-005", input: ["alpha beta"] })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(reply.json.data[0].embedding, FakeUpstream.vectorFor("text-embedding-005||alpha beta", 16))
    assert.strictEqual(reply.json.usage.prompt_tokens, 2)
    const ranked = await gateway.call("/rerank", { model: "google/semantic-ranker", query: "q", documents: ["a", "b", "c"], top_n: 2 })
    assert.strictEqual(ranked.status, 200, ranked.text)
    assert.strictEqual(ranked.json.results.length, 2)
    assert.isAtLeast(ranked.json.results[0].relevance_score, ranked.json.results[1].relevance_score)
    assert.strictEqual(vertex.tokensIssued(), 1)
    // google-auth-library's first token waits for its metadata-server detection (seconds on a busy machine).
  }, 60_000)

  // Last: the revoked token stays held (it has not expired), so Vertex refuses from here on.
  it("a token Vertex refuses is a 401-class refusal naming the provider, the token nowhere in the answer or the log", async () => {
    // A token held first (the test before may have fetched it already).
    const served = await gateway.embed({ model: "google/text-embedding-005", input: ["before"] })
    assert.strictEqual(served.status, 200, served.text)
    assert.isAbove(vertex.tokens().length, 0)
    vertex.revokeTokens()
    const { result: reply, text } = await capturingStdout(() => gateway.embed({ model: "google/text-embedding-005", input: ["revoked"] }))
    assert.strictEqual(reply.status, 502, reply.text)
    assert.include(reply.json.error.message, "\"google-vertex\"")
    assert.include(reply.json.error.message, "rejected the gateway's credentials")
    const ranked = await capturingStdout(() => gateway.call("/rerank", { model: "google/semantic-ranker", query: "q", documents: ["a", "b"] }))
    assert.strictEqual(ranked.result.status, 502, ranked.result.text)
    assert.include(ranked.result.json.error.message, "\"google-vertex\"")
    for (const token of vertex.tokens()) {
      for (const out of [reply.text, text, ranked.result.text, ranked.text]) assert.notInclude(out, token)
    }
  }, 60_000)
})
