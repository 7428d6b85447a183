import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeInfinity from "../fakes/FakeInfinity.ts"
import * as FakeOllama from "../fakes/FakeOllama.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeTei from "../fakes/FakeTei.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVllm from "../fakes/FakeVllm.ts"
import { endpoint, type Gateway, provider, startGateway } from "./Gateway.ts"

const rerankEndpoint = (model: string, upstream: string) => ({ model, upstream_model: upstream, task: "rerank", pricing: { request: "0" } })

describe("Self-hosted model servers behind the gateway", () => {
  let gateway: Gateway
  let tei: FakeUpstream.FakeServer
  let infinity: FakeUpstream.FakeServer
  let vllm: FakeUpstream.FakeServer
  let ollama: FakeUpstream.FakeServer
  let silentOllama: FakeUpstream.FakeServer
  let silentOpenAi: FakeUpstream.FakeServer

  beforeAll(async () => {
    ;[tei, infinity, vllm, ollama, silentOllama, silentOpenAi] = await Promise.all([
      FakeTei.start(),
      FakeInfinity.start(),
      FakeVllm.start(),
      FakeOllama.start(),
      FakeOllama.start({ noCounts: true }),
      FakeOpenAi.start({ reportUsage: false })
    ])
    gateway = await startGateway({
      config: {
        providers: [
          provider("tei", tei.url, { adapter: "tei", api_key_env: null }, [
            endpoint("sh/tei-embed", { upstream_model: "bge-small", dimensions: 384 }),
            rerankEndpoint("sh/tei-rerank", "bge-reranker")
          ]),
          provider("infinity", infinity.url, { adapter: "infinity", api_key_env: null }, [
            endpoint("sh/infinity-embed", { upstream_model: "BAAI/bge-small-en-v1.5", dimensions: 384 }),
            rerankEndpoint("sh/infinity-rerank", "mixedbread-ai/mxbai-rerank-xsmall-v1")
          ]),
          provider("vllm", vllm.url, { adapter: "vllm", api_key_env: null }, [
            endpoint("sh/vllm-embed", { upstream_model: "intfloat/e5-small-v2", dimensions: 384 }),
            rerankEndpoint("sh/vllm-rerank", "BAAI/bge-reranker-v2-m3")
          ]),
          provider("ollama", ollama.url, { adapter: "ollama", api_key_env: null }, [
            endpoint("sh/ollama-embed", { upstream_model: "nomic-embed-text", dimensions: 768 })
          ]),
          provider("quiet", silentOllama.url, { adapter: "ollama", api_key_env: null }, [
            endpoint("sh/quiet-embed", { upstream_model: "nomic-embed-text", dimensions: 768 })
          ]),
          provider("nocount", silentOpenAi.url, {}, [endpoint("sh/nocount-embed", { upstream_model: "m", dimensions: 16 })])
        ],
        workspaces: { default: { cache: false } }
      },
      credits: 100
    })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all([tei, infinity, vllm, ollama, silentOllama, silentOpenAi].map((s) => s.close()))
  })

  for (const [model, counted] of [["sh/tei-embed", 5 + 4], ["sh/infinity-embed", 5 + 4], ["sh/vllm-embed", 5 + 4], ["sh/ollama-embed", 5 + 4]] as const) {
    it(`${model}: vectors and the server's own token count, not marked estimated`, async () => {
      const reply = await gateway.embed({ model, input: ["the cat sat", "a dog"] })
      assert.strictEqual(reply.status, 200, reply.text)
      assert.strictEqual(reply.json.data.length, 2)
      assert.strictEqual(reply.json.usage.prompt_tokens, counted)
      assert.notProperty(reply.json.usage, "tokens_estimated")
    })
  }

  for (const model of ["sh/quiet-embed", "sh/nocount-embed"]) {
    it(`${model}: a server that reports no count and cannot tokenize is estimated, never 0, and says so`, async () => {
      const reply = await gateway.embed({ model, input: ["Hello, world!", "x"] })
      assert.strictEqual(reply.status, 200, reply.text)
      assert.strictEqual(reply.json.usage.prompt_tokens, 4 + 1)
      assert.strictEqual(reply.json.usage.tokens_estimated, true)
    })
  }

  for (const model of ["sh/tei-rerank", "sh/infinity-rerank", "sh/vllm-rerank"]) {
    it(`${model}: reranks through the server, the most relevant document first`, async () => {
      const reply = await gateway.call("/rerank", { model, query: "cats purr", documents: ["a car", "cats purr loudly", "a dog"] })
      assert.strictEqual(reply.status, 200, reply.text)
      assert.strictEqual(reply.json.results.length, 3)
      if (model !== "sh/tei-rerank") assert.strictEqual(reply.json.results[0].index, 1)
    })
  }
})
