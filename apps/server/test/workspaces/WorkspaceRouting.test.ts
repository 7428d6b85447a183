import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { endpoint, type Gateway, provider, servedBy, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { storeKind } from "../support/TestServer.ts"

describe(`a workspace's provider settings through PATCH /workspaces/{id} (${storeKind})`, () => {
  let alpha: FakeUpstream.FakeServer
  let beta: FakeUpstream.FakeServer
  let gateway: Gateway

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    beta = await FakeOpenAi.start()
    gateway = await startGateway({
      config: {
        providers: [
          // alpha is cheaper: the plan tries it first unless the workspace's settings rule it out.
          provider("alpha", alpha.url, { data_collection: "allow" }, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.01" } })]),
          provider("beta", beta.url, { data_collection: "deny" }, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.5" } })])
        ],
        workspaces: { default: { zdr: false } }
      },
      credits: 10
    })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all([alpha.close(), beta.close()])
  })

  const patch = (body: unknown) => gateway.call("/workspaces/default", body, { key: gateway.server.managementKey, method: "PATCH" })
  const served = async () => {
    const reply = await gateway.embed({ model: "acme/embed", input: "which provider" })
    assert.strictEqual(reply.status, 200, reply.text)
    return servedBy(reply)
  }

  it("ignore applies to the next request, and null gives the config file's list back", async () => {
    assert.strictEqual(await served(), "alpha")
    const ignored = await patch({ ignore: ["alpha"] })
    assert.strictEqual(ignored.status, 200, ignored.text)
    assert.deepStrictEqual(ignored.json.data.ignore, ["alpha"])
    assert.strictEqual(await served(), "beta")
    const read = await gateway.call("/workspaces/default", undefined, { key: gateway.server.managementKey })
    assert.deepStrictEqual(read.json.data.ignore, ["alpha"])
    const cleared = await patch({ ignore: null })
    assert.strictEqual(cleared.status, 200, cleared.text)
    assert.deepStrictEqual(cleared.json.data.ignore, [])
    assert.strictEqual(await served(), "alpha")
  })

  it("only and the data policy apply to the next request, each kept until cleared", async () => {
    assert.strictEqual((await patch({ only: ["beta"] })).status, 200)
    assert.strictEqual(await served(), "beta")
    assert.strictEqual((await patch({ only: null, data_collection: "deny" })).status, 200)
    assert.strictEqual(await served(), "beta")
    const after = await patch({ name: "Default renamed" })
    assert.strictEqual(after.json.data.data_collection, "deny", "an update of another field keeps the policy")
    assert.strictEqual(after.json.data.only, null)
    assert.strictEqual(await served(), "beta")
    assert.strictEqual((await patch({ data_collection: null, zdr: true })).status, 200)
    const refused = await gateway.embed({ model: "acme/embed", input: "no zdr provider" })
    assert.strictEqual(refused.status, 404, refused.text)
    assert.strictEqual((await patch({ zdr: null })).status, 200)
    assert.strictEqual(await served(), "alpha")
  })

  it("an unknown field is a 400 in the error envelope, and nothing changes", async () => {
    const reply = await patch({ ignore: ["alpha"], ignored_providers: ["alpha"] })
    assert.strictEqual(reply.status, 400, reply.text)
    assert.strictEqual(reply.json.error.code, 400)
    assert.include(reply.json.error.message, "ignored_providers")
    assert.strictEqual(await served(), "alpha")
    const wrong = await patch({ data_collection: "sometimes" })
    assert.strictEqual(wrong.status, 400, wrong.text)
    assert.strictEqual(wrong.json.error.code, 400)
  })
})
