import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import OpenAI, { toFile } from "openai"
import { costOf, endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeAzureOpenAi from "../fakes/FakeAzureOpenAi.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { storeKind } from "../support/TestServer.ts"

// A gateway with Azure OpenAI configured as the product describes it, against a fake of Azure's
// REST API that checks the `api-key` (or the token it issued) and the `api-version` on every call,
// the Files and Batch routes included.

const key = "azure-fake-key-0123456789"
const apiVersion = "2024-10-21"
const small = "openai/text-embedding-3-small"
const batchPrice = "0.01"

// (Failover to OpenAI and a refused key: test/embeddings/CloudProviders.test.ts.)
const azure = (url: string, keyEnv: string, slug = "azure") => ({
  slug,
  name: `Azure OpenAI (${slug})`,
  adapter: "azure",
  base_url: url,
  api_version: apiVersion,
  api_key_env: keyEnv,
  data_collection: "deny",
  endpoints: [{
    model: small,
    upstream_model: "embed-small",
    // Azure's Batch API runs on a global-batch deployment of its own.
    batch_upstream_model: "embed-small-batch",
    pricing: { prompt: "0.02", batch: { prompt: batchPrice } },
    dimensions: 1536,
    max_batch_items: 2048
  }]
})

const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean, timeoutMs = 30_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`not done in time: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const jsonLines = (text: string) => text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))

describe(`a gateway with Azure OpenAI configured as the product describes it (${storeKind})`, () => {
  let fake: FakeAzureOpenAi.FakeAzure
  let openai: FakeUpstream.FakeServer
  let gateway: Gateway

  beforeAll(async () => {
    fake = await FakeAzureOpenAi.start({
      apiKey: key,
      apiVersion,
      defaultWidth: 1536,
      deployments: { "embed-small": "text-embedding-3-small", "embed-small-batch": "text-embedding-3-small" },
      batch: {}
    })
    openai = await FakeOpenAi.start()
    gateway = await startGateway({
      credits: 10,
      config: {
        providers: [
          azure(fake.url, "AZURE_OPENAI_API_KEY"),
          provider("openai", openai.url, { data_collection: "allow" }, [endpoint(small, { upstream_model: "text-embedding-3-small", dimensions: 1536 })])
        ]
      },
      env: {
        AZURE_OPENAI_API_KEY: key,
        SWITCHYARD_BATCH_POLL_MS: "100",
        SWITCHYARD_PROVIDER_BATCH_POLL_MS: "200"
      }
    })
  }, 60_000)

  afterAll(async () => {
    await gateway?.close()
    await fake?.close()
    await openai?.close()
  })

  it("embeds through a deployment with the api-key: the deployment's vectors, usage tokens and cost", async () => {
    const reply = await gateway.embed({ model: small, input: ["the red fox", "jumps"], provider: { only: ["azure"] } })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(reply.json.data.map((d: { embedding: Array<number> }) => d.embedding), [
      FakeUpstream.vectorFor("text-embedding-3-small|the red fox", 1536),
      FakeUpstream.vectorFor("text-embedding-3-small|jumps", 1536)
    ])
    assert.strictEqual(reply.json.usage.prompt_tokens, 4)
    assert.strictEqual(reply.json.usage.cost, costOf(4, "0.02"))
    assert.strictEqual(reply.headers.get("x-switchyard-provider"), "azure")
    const sent = fake.requests.filter((r) => r.path.startsWith("/openai/deployments/embed-small/embeddings")).at(-1)!
    assert.strictEqual(sent.headers["api-key"], key)
    assert.include(sent.path, `api-version=${apiVersion}`)
  })

  it("a batch's lines run through Azure's Files and Batch API on the global-batch deployment, at the batch price", async () => {
    const client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
    const corpus = ["first batch text", "second batch text", "third one"]
    const input = corpus.map((t, i) => JSON.stringify({ custom_id: `a${i}`, method: "POST", url: "/v1/embeddings", body: { model: small, input: t, provider: { only: ["azure"] } } }))
      .join("\n")
    const batchesBefore = fake.batches.size
    const file = await client.files.create({ file: await toFile(Buffer.from(input), "input.jsonl"), purpose: "batch" })
    const created = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    const batch = await until(() => client.batches.retrieve(created.id), (b) => b.status === "completed" || b.status === "failed")
    assert.strictEqual(batch.status, "completed")
    assert.deepStrictEqual(batch.request_counts, { total: 3, completed: 3, failed: 0 })

    // One provider batch at Azure, its lines naming the global-batch deployment; every call of the
    // Files and Batch API carried the key and the api-version (the fake refuses any other).
    assert.strictEqual(fake.batches.size - batchesBefore, 1)
    const made = [...fake.batches.values()].at(-1)!
    assert.strictEqual(made.status, "completed")
    assert.sameMembers(made.requests.map((r) => (r.body as { model: string }).model), ["embed-small-batch", "embed-small-batch", "embed-small-batch"])
    const batchCalls = fake.requests.filter((r) => r.path.startsWith("/openai/files") || r.path.startsWith("/openai/batches"))
    assert.isAbove(batchCalls.length, 3)
    for (const call of batchCalls) {
      assert.strictEqual(call.headers["api-key"], key, call.path)
      assert.include(call.path, `api-version=${apiVersion}`)
    }

    const output = jsonLines(await (await client.files.content(batch.output_file_id!)).text())
    assert.sameMembers(output.map((o) => o.custom_id), ["a0", "a1", "a2"])
    for (const o of output) {
      const i = Number(o.custom_id.slice(1))
      assert.strictEqual(o.response.status_code, 200)
      assert.strictEqual(o.response.body.provider, "azure")
      assert.deepStrictEqual(o.response.body.data[0].embedding, FakeUpstream.vectorFor(`text-embedding-3-small|${corpus[i]}`, 1536))
      assert.strictEqual(o.response.body.usage.cost, costOf(o.response.body.usage.prompt_tokens, batchPrice), "charged at the batch price")
    }
  }, 60_000)
})
