import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeBedrock from "../fakes/FakeBedrock.ts"
import { storeKind } from "../support/TestServer.ts"
import { type ObservedGateway, spansOf, startObservedGateway, startReceiver, tracingTo, waitFor } from "./Receivers.ts"

describe(`a Bedrock call's credential in no span and no log line (${storeKind})`, () => {
  let fake: FakeBedrock.FakeBedrock
  let observed: ObservedGateway
  let collector: Awaited<ReturnType<typeof startReceiver>>
  let webhook: Awaited<ReturnType<typeof startReceiver>>

  beforeAll(async () => {
    fake = await FakeBedrock.start()
    collector = await startReceiver()
    webhook = await startReceiver()
    observed = await startObservedGateway({
      webhookUrl: `${webhook.origin}/hooks`,
      env: {
        ...tracingTo(collector),
        // The gateway process's AWS chain finds only the fake's container route.
        AWS_ACCESS_KEY_ID: "",
        AWS_PROFILE: "",
        AWS_CONFIG_FILE: "/nonexistent/aws-config",
        AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/aws-credentials",
        AWS_EC2_METADATA_DISABLED: "true",
        AWS_CONTAINER_CREDENTIALS_FULL_URI: fake.credentialsUrl,
        AWS_CONTAINER_AUTHORIZATION_TOKEN: fake.credentialsToken
      }
    })
  }, 120_000)
  afterAll(async () => {
    await observed?.close()
    await collector?.close()
    await webhook?.close()
    await fake?.close()
  })

  it("the secret key, session token and signature of a signed call are in no exported span and no log line", async () => {
    const { call, gateway, keys } = observed
    const created = await call("/providers", {
      slug: "bedrock-traced",
      name: "Bedrock",
      adapter: "bedrock",
      region: "us-east-1",
      base_url: fake.url,
      data_collection: "deny",
      endpoints: [{ model: "amazon/titan-embed-text-v2", upstream_model: "amazon.titan-embed-text-v2:0", pricing: { prompt: "0" }, dimensions: 1024, max_batch_items: 8 }]
    }, { key: keys.managementKey })
    assert.strictEqual(created.status, 201, JSON.stringify(created.json))
    const traceId = "5b1e3d7f9a2c4e6b8d0f1a3c5e7b9d1f"
    const served = await call("/embeddings", { model: "amazon/titan-embed-text-v2", input: ["signed", "twice"] }, {
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` }
    })
    assert.strictEqual(served.status, 200, JSON.stringify(served.json))
    await waitFor(() => spansOf(collector.received).some((s) => s.traceId === traceId && s.name === "Accounting.settle"))
    const exported = collector.received.map((r) => r.body.toString("utf8")).join("\n")
    assert.include(exported, "Bedrock.embed")
    assert.strictEqual(fake.issued.length, 1)
    const signatures = fake.invocations.map((i) => /Signature=([0-9a-f]{64})/u.exec(String(i.headers.authorization))![1]!)
    assert.lengthOf(signatures, 2)
    for (const secret of [fake.issued[0]!.secretAccessKey, fake.issued[0]!.sessionToken, ...signatures]) {
      assert.notInclude(exported, secret)
      assert.notInclude(gateway.output(), secret)
    }
  })
})
