import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { costOf, endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeBedrock from "../fakes/FakeBedrock.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { capturingStdout } from "../support/CapturedOutput.ts"
import { storeKind } from "../support/TestServer.ts"

FakeBedrock.isolateCredentialChain()

const titan = "amazon.titan-embed-text-v2:0"

describe(`a gateway with Amazon Bedrock configured as the product describes it (${storeKind})`, () => {
  let fake: FakeBedrock.FakeBedrock
  let other: FakeUpstream.FakeServer
  let gateway: Gateway

  beforeAll(async () => {
    fake = await FakeBedrock.start()
    FakeBedrock.pointCredentialChainAt(fake)
    other = await FakeOpenAi.start({ defaultWidth: 256 })
    gateway = await startGateway({
      credits: 10,
      config: {
        providers: [{
          slug: "amazon-bedrock",
          name: "Amazon Bedrock",
          adapter: "bedrock",
          region: "us-east-1",
          base_url: fake.url,
          data_collection: "deny",
          endpoints: [
            {
              model: "amazon/titan-embed-text-v2",
              upstream_model: titan,
              pricing: { prompt: "0.02" },
              dimensions: 1024,
              supported_parameters: ["dimensions", "encoding_format"],
              max_batch_items: 128
            },
            { model: "cohere/rerank-v3.5", upstream_model: "cohere.rerank-v3-5:0", task: "rerank", pricing: { search: "2" } }
          ]
        }, provider("other", other.url, { data_collection: "allow" }, [endpoint("amazon/titan-embed-text-v2", { dimensions: 256 })])]
      },
      env: { AWS_CONTAINER_CREDENTIALS_FULL_URI: fake.credentialsUrl }
    })
  }, 60_000)

  afterAll(async () => {
    await gateway?.close()
    await fake?.close()
    await other?.close()
  })

  it("embeds through Titan with the vectors, usage tokens and cost of the answer", async () => {
    const reply = await gateway.embed({ model: "amazon/titan-embed-text-v2", input: ["the red fox", "jumps"], dimensions: 256 })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(reply.json.data.map((d: { embedding: Array<number> }) => d.embedding), [
      FakeUpstream.vectorFor(`${titan}|the red fox`, 256),
      FakeUpstream.vectorFor(`${titan}|jumps`, 256)
    ])
    assert.strictEqual(reply.json.usage.prompt_tokens, 4)
    assert.strictEqual(reply.json.usage.cost, costOf(4, "0.02"))
    assert.strictEqual(reply.headers.get("x-switchyard-provider"), "amazon-bedrock")
  })

  it("a throttled Bedrock falls back to the next provider of the same model; /generation lists both attempts", async () => {
    fake.refuseNext({ status: 429, type: "ThrottlingException", message: "Too many requests, please wait before trying again." })
    const reply = await gateway.embed({
      model: "amazon/titan-embed-text-v2",
      input: "throttled then served",
      dimensions: 256,
      provider: { order: ["amazon-bedrock", "other"] }
    })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(reply.headers.get("x-switchyard-provider"), "other")
    const generation = await gateway.call(`/generation?id=${reply.json.id}`)
    const responses = generation.json.data.provider_responses as Array<any>
    assert.deepStrictEqual(responses.map((r) => [r.provider_name, r.status, r.reason]), [
      ["Amazon Bedrock", 429, "RateLimited"],
      ["other", 200, undefined]
    ])
    // data_collection: "deny" keeps the request on Bedrock, which answers once the throttle passes.
    const denied = await gateway.embed({ model: "amazon/titan-embed-text-v2", input: "private", provider: { data_collection: "deny" } })
    assert.strictEqual(denied.status, 200, denied.text)
    assert.strictEqual(denied.headers.get("x-switchyard-provider"), "amazon-bedrock")
  })

  it("reranks through Cohere Rerank 3.5 on Bedrock", async () => {
    const reply = await gateway.call("/rerank", { model: "cohere/rerank-v3.5", query: "red fox", documents: ["a blue whale", "the red fox"] })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(reply.json.results[0].index, 1)
    assert.strictEqual(reply.json.results.length, 2)
  })

  it("takes a managed bedrock provider through the API and routes to it", async () => {
    const created = await gateway.call("/providers", {
      slug: "bedrock-managed",
      name: "Bedrock (managed)",
      adapter: "bedrock",
      region: "us-east-1",
      base_url: fake.url,
      data_collection: "deny",
      endpoints: [{ model: "amazon/titan-embed-text-v2", upstream_model: titan, pricing: { prompt: "0.02" }, dimensions: 1024, max_batch_items: 128 }]
    }, { key: gateway.server.managementKey })
    assert.strictEqual(created.status, 201, created.text)
    assert.strictEqual(created.json.data.provider.region, "us-east-1")
    const missingRegion = await gateway.call("/providers", {
      slug: "bedrock-nowhere",
      name: "Bedrock",
      adapter: "bedrock",
      data_collection: "deny",
      endpoints: []
    }, { key: gateway.server.managementKey })
    assert.strictEqual(missingRegion.status, 400, missingRegion.text)
    assert.include(missingRegion.text, "needs a region")
    const reply = await gateway.embed({ model: "amazon/titan-embed-text-v2", input: "x", provider: { only: ["bedrock-managed"] } })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(reply.headers.get("x-switchyard-provider"), "bedrock-managed")
  })

  it("a signature the service no longer accepts is refused naming the provider, with no secret in the answer or the log", async () => {
    fake.rotateSecrets()
    const { result: reply, text } = await capturingStdout(() => gateway.embed({ model: "amazon/titan-embed-text-v2", input: "x", provider: { only: ["amazon-bedrock"] } }))
    assert.strictEqual(reply.status, 502, reply.text)
    assert.include(reply.json.error.message, "\"amazon-bedrock\"")
    assert.include(reply.json.error.message, "rejected the gateway's credentials")
    for (const credential of fake.issued) {
      for (const secret of [credential.secretAccessKey, credential.sessionToken]) {
        assert.notInclude(reply.text, secret)
        assert.notInclude(text, secret)
      }
    }
    assert.notInclude(reply.text, "Signature=")
  })
})
