import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type Gateway, startGateway } from "../embeddings/Gateway.ts"
import * as FakeBedrock from "../fakes/FakeBedrock.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { level, record } from "./Reliability.ts"

// Issue #45's figure, through the whole gateway (the adapter alone: test/providers/Bedrock.test.ts):
// 1,000 requests of 8 inputs, 16 at a time, to Titan on the fake Bedrock. Titan takes one input
// a call, so each request fans out to 8 signed InvokeModel calls: every vector must come back
// in its input's place, and the container credential be fetched once for its whole lifetime.

FakeBedrock.isolateCredentialChain()

const titan = "amazon.titan-embed-text-v2:0"
const requests = 1000
const concurrency = 16
const inputsPerRequest = 8

describe.skipIf(level !== "full")("reliability: Bedrock Titan fan-out through the gateway", () => {
  let fake: FakeBedrock.FakeBedrock
  let gateway: Gateway

  beforeAll(async () => {
    fake = await FakeBedrock.start()
    FakeBedrock.pointCredentialChainAt(fake)
    gateway = await startGateway({
      credits: 1000,
      config: {
        providers: [{
          slug: "amazon-bedrock",
          name: "Amazon Bedrock",
          adapter: "bedrock",
          region: "us-east-1",
          base_url: fake.url,
          data_collection: "deny",
          endpoints: [{
            model: "amazon/titan-embed-text-v2",
            upstream_model: titan,
            pricing: { prompt: "0.02" },
            dimensions: 1024,
            supported_parameters: ["dimensions", "encoding_format"],
            max_batch_items: 128
          }]
        }],
        workspaces: { default: { cache: false } }
      },
      env: { AWS_CONTAINER_CREDENTIALS_FULL_URI: fake.credentialsUrl }
    })
  }, 60_000)

  afterAll(async () => {
    await gateway?.close()
    await fake?.close()
  })

  it(`${requests} requests of ${inputsPerRequest} inputs, ${concurrency} at a time: every vector in order, one credential fetch`, async () => {
    const failures: Array<string> = []
    let next = 0
    const worker = async () => {
      for (let r = next++; r < requests; r = next++) {
        const inputs = Array.from({ length: inputsPerRequest }, (_, i) => `request ${r} input ${i}`)
        const reply = await gateway.embed({ model: "amazon/titan-embed-text-v2", input: inputs, dimensions: 256 })
        const inOrder = reply.status === 200 &&
          (reply.json.data as Array<{ index: number; embedding: Array<number> }>).every((d, i) =>
            d.index === i && JSON.stringify(d.embedding) === JSON.stringify(FakeUpstream.vectorFor(`${titan}|${inputs[i]}`, 256))
          )
        if (!inOrder) failures.push(`request ${r}: ${reply.status} ${reply.text.slice(0, 300)}`)
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    record("bedrock-fan-out", { requests })
    assert.deepStrictEqual(failures, [])
    assert.strictEqual(fake.invocations.length, requests * inputsPerRequest)
    assert.strictEqual(fake.issued.length, 1, "the container credential fetched once")
  }, 600_000)
})
