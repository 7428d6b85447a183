import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { BadRequest } from "@switchyard/core/schema/ApiError"
import * as FakeBedrock from "../../../apps/server/test/fakes/FakeBedrock.ts"
import { type RunningServer, startServer } from "../../../apps/server/test/support/TestServer.ts"
import { Switchyard } from "../src/Switchyard.ts"

const bedrockKey = "ABSKY2xpZW50LWJlZHJvY2sta2V5LTk4NzY="

describe("Switchyard (promise facade) with an Amazon Bedrock provider", () => {
  let server: RunningServer
  let fake: FakeBedrock.FakeBedrock
  beforeAll(async () => {
    fake = await FakeBedrock.start({ apiKey: bedrockKey, region: "eu-west-1" })
    server = await startServer()
  })
  afterAll(async () => {
    await server?.close()
    await fake?.close()
  })

  it("adds a bedrock provider with its region, tests it, moves its region, and never answers its key", async () => {
    await using switchyard = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.managementKey })
    const created = await switchyard.providerAdmin.create({
      payload: {
        slug: "bedrock-client",
        name: "Bedrock",
        adapter: "bedrock",
        region: "eu-west-1",
        base_url: fake.url,
        data_collection: "deny",
        api_key: bedrockKey,
        endpoints: [{ model: "cohere/rerank-v3.5", upstream_model: "cohere.rerank-v3-5:0", task: "rerank", pricing: { search: "2" } }]
      }
    })
    assert.strictEqual(created.data.provider.region, "eu-west-1")
    const tested = await switchyard.providerAdmin.test({ params: { slug: "bedrock-client" } })
    assert.isTrue(tested.data.ok, JSON.stringify(tested.data))
    const refused = await switchyard.providerAdmin.update({ params: { slug: "bedrock-client" }, payload: { region: "Frankfurt" } })
      .then(() => undefined, (e: unknown) => e)
    assert.instanceOf(refused, BadRequest)
    const moved = await switchyard.providerAdmin.update({ params: { slug: "bedrock-client" }, payload: { region: "eu-central-1" } })
    assert.strictEqual(moved.data.provider.region, "eu-central-1")
    assert.notInclude(JSON.stringify([created, tested, moved]), bedrockKey)
  })
})
