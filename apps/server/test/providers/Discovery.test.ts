import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as FakeInfinity from "../fakes/FakeInfinity.ts"
import * as FakeOllama from "../fakes/FakeOllama.ts"
import * as FakeServedModels from "../fakes/FakeServedModels.ts"
import * as FakeTei from "../fakes/FakeTei.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVllm from "../fakes/FakeVllm.ts"
import { call, dropDatabase, freshDatabase, type RunningServer, startServer, storeKind, tempDir } from "../support/TestServer.ts"

// Issue #46: self-hosted providers with `"discover": true` serve what their servers list, on two
// gateways sharing one store (PostgreSQL under `test:pg`), each listing the servers itself. Model
// ids are listed in lower case; a request may name them in the server's own case.
describe(`discovery of a self-hosted server's models (${storeKind})`, () => {
  const infinityServed = new FakeServedModels.Served([
    { id: "BAAI/bge-small-en-v1.5", task: "embeddings", dimensions: 384 },
    { id: "mixedbread-ai/mxbai-rerank-xsmall-v1", task: "rerank" }
  ])
  const ollamaServed = new FakeServedModels.Served([{ id: "nomic-embed-text:latest", task: "embeddings", dimensions: 768 }])
  const fakes: Array<FakeUpstream.FakeServer> = []
  const gateways: Array<RunningServer> = []
  let databaseUrl: string | undefined

  beforeAll(async () => {
    const [tei, teiRerank, infinity, ollama, vllm] = await Promise.all([
      FakeTei.start({ info: { model_id: "BAAI/bge-base-en-v1.5", model_type: "embedding" }, maxBatch: 16 }),
      FakeTei.start({ info: { model_id: "BAAI/bge-reranker-base", model_type: "reranker" } }),
      FakeInfinity.start({ served: infinityServed }),
      FakeOllama.start({ served: ollamaServed, chat: ["llama3.2:1b"] }),
      FakeVllm.start({
        served: new FakeServedModels.Served([
          { id: "intfloat/e5-small-v2", task: "embeddings", dimensions: 384 },
          { id: "BAAI/bge-reranker-v2-m3", task: "rerank" }
        ])
      })
    ])
    fakes.push(tei!, teiRerank!, infinity!, ollama!, vllm!)
    const server = (slug: string, adapter: string, url: string, extra: Record<string, unknown> = {}) => ({
      slug,
      name: slug,
      adapter,
      base_url: url,
      data_collection: "deny",
      discover: true,
      discover_interval_s: 1,
      ...extra
    })
    const dir = tempDir("discovery")
    const configPath = NodePath.join(dir, "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [
        server("gpu-tei", "tei", tei!.url, {
          models: { "BAAI/bge-base-en-v1.5": "baai/bge-base-en-v1.5" },
          default_pricing: { prompt: "0.01" }
        }),
        server("gpu-tei-rerank", "tei", teiRerank!.url),
        server("gpu-infinity", "infinity", infinity!.url),
        server("gpu-ollama", "ollama", ollama!.url),
        server("gpu-vllm", "vllm", vllm!.url)
      ]
    }))
    databaseUrl = storeKind === "postgres" ? await freshDatabase() : undefined
    const env = { SWITCHYARD_CONFIG: configPath }
    const first = await startServer({ env, ...(databaseUrl !== undefined ? { databaseUrl } : {}) })
    gateways.push(first)
    // The second gateway: the same store and keys on PostgreSQL, its own embedded store otherwise.
    gateways.push(await startServer({
      env: { ...env, SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: first.managementKey, SWITCHYARD_BOOTSTRAP_API_KEY: first.apiKey },
      ...(databaseUrl !== undefined ? { databaseUrl } : {})
    }))
  }, 60_000)

  afterAll(async () => {
    for (const gateway of gateways) await gateway.close()
    if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
    for (const fake of fakes) await fake.close()
  })

  const modelIds = async (gateway: RunningServer) => {
    const listed = await call(gateway, "GET", "/models?output_modalities=all", gateway.apiKey)
    assert.strictEqual(listed.status, 200)
    return (listed.body.data as ReadonlyArray<{ id: string }>).map((m) => m.id)
  }

  /** The gateway's model ids once `done` holds of them, or after 10 s whatever they are. */
  const modelIdsOnce = async (gateway: RunningServer, done: (ids: ReadonlyArray<string>) => boolean) => {
    let ids = await modelIds(gateway)
    for (const deadline = Date.now() + 10_000; !done(ids) && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      ids = await modelIds(gateway)
    }
    return ids
  }

  it("serves every model each server lists from the first request: embeddings with their width, rerank, mapped ids and the default price", async () => {
    for (const gateway of gateways) {
      const ids = await modelIds(gateway)
      assert.includeMembers(ids, [
        "baai/bge-base-en-v1.5",
        "gpu-tei-rerank/baai/bge-reranker-base",
        "gpu-infinity/baai/bge-small-en-v1.5",
        "gpu-infinity/mixedbread-ai/mxbai-rerank-xsmall-v1",
        "gpu-ollama/nomic-embed-text:latest",
        "gpu-vllm/intfloat/e5-small-v2",
        "gpu-vllm/baai/bge-reranker-v2-m3"
      ])
      // A chat model Ollama lists but will not embed is not served.
      assert.notInclude(ids, "gpu-ollama/llama3.2:1b")
    }
    const [gateway] = gateways
    const widths: Record<string, number> = {
      "baai/bge-base-en-v1.5": 384,
      "gpu-infinity/BAAI/bge-small-en-v1.5": 384,
      "gpu-ollama/nomic-embed-text:latest": 768,
      "gpu-vllm/intfloat/e5-small-v2": 384
    }
    for (const [model, width] of Object.entries(widths)) {
      const answer = await call(gateway!, "POST", "/embeddings", gateway!.apiKey, { model, input: ["the cat sat", "a dog"] })
      assert.strictEqual(answer.status, 200, `${model}: ${JSON.stringify(answer.body).slice(0, 300)}`)
      assert.strictEqual(answer.body.data.length, 2)
      assert.strictEqual(answer.body.data[0].embedding.length, width, model)
      assert.isAbove(answer.body.usage.prompt_tokens, 0, model)
    }
    // TEI's model at its mapped id, priced by `default_pricing` ($0.01 per million tokens).
    const priced = await call(gateway!, "POST", "/embeddings", gateway!.apiKey, { model: "baai/bge-base-en-v1.5", input: "one two three" })
    assert.isAbove(priced.body.usage.cost, 0)
    for (const model of ["gpu-tei-rerank/BAAI/bge-reranker-base", "gpu-infinity/mixedbread-ai/mxbai-rerank-xsmall-v1", "gpu-vllm/BAAI/bge-reranker-v2-m3"]) {
      const ranked = await call(gateway!, "POST", "/rerank", gateway!.apiKey, { model, query: "cats", documents: ["a cat", "a car"] })
      assert.strictEqual(ranked.status, 200, `${model}: ${JSON.stringify(ranked.body).slice(0, 300)}`)
      assert.strictEqual(ranked.body.results.length, 2)
    }
  })

  it("adds a model a server starts serving and drops one it stops serving within one interval, on every gateway", async () => {
    infinityServed.models = [...infinityServed.models, { id: "BAAI/bge-m3", task: "embeddings", dimensions: 1024 }]
    ollamaServed.models = []
    for (const gateway of gateways) {
      const ids = await modelIdsOnce(gateway, (ids) => ids.includes("gpu-infinity/baai/bge-m3") && !ids.includes("gpu-ollama/nomic-embed-text:latest"))
      assert.include(ids, "gpu-infinity/baai/bge-m3")
      assert.notInclude(ids, "gpu-ollama/nomic-embed-text:latest")
      const added = await call(gateway, "POST", "/embeddings", gateway.apiKey, { model: "gpu-infinity/BAAI/bge-m3", input: "x" })
      assert.strictEqual(added.status, 200, JSON.stringify(added.body).slice(0, 300))
      assert.strictEqual(added.body.data[0].embedding.length, 1024)
      const dropped = await call(gateway, "POST", "/embeddings", gateway.apiKey, { model: "gpu-ollama/nomic-embed-text:latest", input: "x" })
      assert.strictEqual(dropped.status, 404, JSON.stringify(dropped.body).slice(0, 300))
    }
  })
})
