import { OpenRouter } from "@openrouter/sdk"
import * as SdkErrors from "@openrouter/sdk/models/errors"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"

const rerank = { upstream_model: "r", task: "rerank", pricing: { prompt: "0.02" } }

describe("@openrouter/sdk against Switchyard: the model listing", () => {
  let gateway: Gateway
  let upstream: FakeUpstream.FakeServer
  let anonymous: OpenRouter
  let client: OpenRouter

  beforeAll(async () => {
    upstream = await FakeOpenAi.start({ apiKey: "sk-fake" })
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", upstream.url, {}, [endpoint("acme/embed"), { model: "acme/rerank", ...rerank }]),
          // Retains data: the workspace's data_collection "deny" hides it from the workspace's view.
          provider("beta", upstream.url, { data_collection: "allow" }, [endpoint("acme/open-embed")]),
          // No gateway credential: active only for a workspace that stores its own (BYOK).
          provider("delta", upstream.url, { api_key_env: "DELTA_OWN_KEY" }, [endpoint("acme/byok-embed")])
        ],
        workspaces: { default: { data_collection: "deny" } }
      }
    })
    // No key at all: the listing is public, as OpenRouter's is.
    anonymous = new OpenRouter({ serverURL: gateway.server.baseUrl, retryConfig: { strategy: "none" } })
    client = new OpenRouter({ apiKey: gateway.server.apiKey, serverURL: gateway.server.baseUrl, retryConfig: { strategy: "none" } })
  })
  afterAll(async () => {
    await gateway.close()
    await upstream.close()
  })

  const ids = (page: { readonly result: { readonly data: ReadonlyArray<{ readonly id: string }> } }) => page.result.data.map((m) => m.id)

  it("models.list needs no key and lists embedding models by default, rerank ones when output_modalities asks", async () => {
    const local = ["switchyard/local-embed"]
    assert.deepStrictEqual(ids(await anonymous.models.list()), ["acme/embed", "acme/open-embed", ...local])
    assert.deepStrictEqual(ids(await anonymous.models.list({ outputModalities: "rerank" })), ["acme/rerank", "switchyard/local-rerank"])
    const all = await anonymous.models.list({ outputModalities: "all" })
    assert.deepStrictEqual(ids(all), ["acme/embed", "acme/open-embed", "acme/rerank", ...local, "switchyard/local-rerank"])
    assert.deepStrictEqual(all.result.data.find((m) => m.id === "acme/rerank")?.architecture.outputModalities, ["rerank"])
    // A modality no model here produces matches none; a malformed filter is a 400.
    assert.deepStrictEqual(ids(await anonymous.models.list({ outputModalities: "text" })), [])
    const bad = await anonymous.models.list({ outputModalities: "text, image" }).then(() => undefined, (e: unknown) => e)
    assert.instanceOf(bad, SdkErrors.BadRequestResponseError)
  })

  it("models.count counts what the listing lists, with the same filter", async () => {
    assert.deepStrictEqual(await anonymous.models.count(), { data: { count: 3 } })
    assert.deepStrictEqual(await anonymous.models.count({ outputModalities: "rerank" }), { data: { count: 2 } })
    assert.deepStrictEqual(await client.models.count({ outputModalities: "embeddings,rerank" }), { data: { count: 5 } })
  })

  it("models.get answers one model under data, with no key, and a 404 for a model not served", async () => {
    const { data } = await anonymous.models.get({ author: "acme", slug: "rerank" })
    assert.strictEqual(data.id, "acme/rerank")
    assert.deepStrictEqual(data.architecture.outputModalities, ["rerank"])
    const missing = await anonymous.models.get({ author: "acme", slug: "byok-embed" }).then(() => undefined, (e: unknown) => e)
    assert.instanceOf(missing, SdkErrors.NotFoundResponseError)
  })

  it("models.listForUser needs a key and shows the workspace's view: its settings and its own provider keys", async () => {
    const refused = await anonymous.models.listForUser({ bearer: "sk-wrong-key-1234567890" }).then(() => undefined, (e: unknown) => e)
    assert.instanceOf(refused, SdkErrors.UnauthorizedResponseError)

    const mine = await client.models.listForUser({ bearer: gateway.server.apiKey })
    // beta retains data, which the workspace denies; delta has no credential yet.
    assert.deepStrictEqual(ids(mine), ["acme/embed", "switchyard/local-embed"])

    const admin = { key: gateway.server.managementKey }
    const created = await gateway.call("/byok", { provider: "delta", key: "sk-fake" }, admin)
    assert.strictEqual(created.status, 201, created.text)
    try {
      const withOwnKey = await client.models.listForUser({ bearer: gateway.server.apiKey }, { outputModalities: "all" })
      assert.deepStrictEqual(ids(withOwnKey), ["acme/byok-embed", "acme/embed", "acme/rerank", "switchyard/local-embed", "switchyard/local-rerank"])
      // The public listing shows what the gateway's own credentials serve, whatever a workspace stored.
      assert.notInclude(ids(await anonymous.models.list()), "acme/byok-embed")
    } finally {
      await gateway.call(`/byok/${created.json.data.id}`, undefined, { ...admin, method: "DELETE" })
    }
  })
})
