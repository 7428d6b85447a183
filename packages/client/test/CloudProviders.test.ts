import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { BadRequest } from "@switchyard/core/schema/ApiError"
import * as FakeAzureOpenAi from "../../../apps/server/test/fakes/FakeAzureOpenAi.ts"
import { type RunningServer, startServer } from "../../../apps/server/test/support/TestServer.ts"
import { Switchyard } from "../src/Switchyard.ts"

const azureKey = "azure-client-key-5678abcdef0123"

describe("Switchyard (promise facade) with Azure OpenAI and Vertex AI providers", () => {
  let server: RunningServer
  let fake: FakeAzureOpenAi.FakeAzure
  beforeAll(async () => {
    fake = await FakeAzureOpenAi.start({ apiKey: azureKey, defaultWidth: 16 })
    server = await startServer()
  })
  afterAll(async () => {
    await server?.close()
    await fake?.close()
  })

  it("adds an azure provider with its api version, tests it, switches it to Entra ID, and never answers its key", async () => {
    await using switchyard = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.managementKey })
    const created = await switchyard.providerAdmin.create({
      payload: {
        slug: "azure-client",
        name: "Azure OpenAI",
        adapter: "azure",
        base_url: fake.url,
        api_version: "2024-10-21",
        data_collection: "deny",
        api_key: azureKey,
        endpoints: [{ model: "openai/text-embedding-3-small", upstream_model: "embed-small", pricing: { prompt: "0.02" }, dimensions: 16, max_batch_items: 2048 }]
      }
    })
    assert.strictEqual(created.data.provider.api_version, "2024-10-21")
    assert.deepStrictEqual(created.data.api_key, { set: true, last4: azureKey.slice(-4) })
    const tested = await switchyard.providerAdmin.test({ params: { slug: "azure-client" } })
    assert.isTrue(tested.data.ok, JSON.stringify(tested.data))
    assert.strictEqual(fake.requests.at(-1)!.headers["api-key"], azureKey)
    // A field of another cloud is refused with the config file's message.
    const refused = await switchyard.providerAdmin.update({ params: { slug: "azure-client" }, payload: { project: "my-proj" } })
      .then(() => undefined, (e: unknown) => e)
    assert.instanceOf(refused, BadRequest)
    assert.include((refused as BadRequest).message, "project belongs to another adapter")
    const entra = await switchyard.providerAdmin.update({ params: { slug: "azure-client" }, payload: { auth: "entra" } })
    assert.strictEqual(entra.data.provider.auth, "entra")
    assert.notInclude(JSON.stringify([created, tested, entra]), azureKey)
  })

  it("adds a vertex provider with its project, location and credentials file", async () => {
    await using switchyard = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.managementKey })
    const created = await switchyard.providerAdmin.create({
      payload: {
        slug: "vertex-client",
        name: "Vertex AI",
        adapter: "vertex",
        project: "my-proj",
        location: "europe-west4",
        credentials_file: "/secrets/sa.json",
        data_collection: "deny",
        endpoints: [{ model: "google/semantic-ranker-default-004", upstream_model: "semantic-ranker-default-004", task: "rerank", pricing: { search: "1" } }]
      }
    })
    const provider = created.data.provider
    assert.deepStrictEqual([provider.project, provider.location, provider.credentials_file], ["my-proj", "europe-west4", "/secrets/sa.json"])
    const missing = await switchyard.providerAdmin.create({
      payload: { slug: "vertex-nowhere", name: "Vertex", adapter: "vertex", location: "us-central1", data_collection: "deny", endpoints: [] }
    }).then(() => undefined, (e: unknown) => e)
    assert.instanceOf(missing, BadRequest)
    assert.include((missing as BadRequest).message, "needs project")
  })
})
