import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Api } from "@switchyard/core/api/Api"
import { Conflict, Forbidden, NotFound } from "@switchyard/core/schema/ApiError"
import { HttpApi } from "effect/http-api"
import * as FakeOpenAi from "../../../apps/server/test/fakes/FakeOpenAi.ts"
import type { FakeServer } from "../../../apps/server/test/fakes/FakeUpstream.ts"
import { type RunningServer, startServer } from "../../../apps/server/test/support/TestServer.ts"
import { Switchyard } from "../src/Switchyard.ts"

describe("Switchyard (promise facade)", () => {
  it("has a promise method for every operation of the contract", async () => {
    await using switchyard = new Switchyard({ baseUrl: "http://127.0.0.1:1" })
    HttpApi.reflect(Api, {
      onGroup: () => {},
      onEndpoint: ({ endpoint, group }) => {
        const holder: object | undefined = group.topLevel ? switchyard : Reflect.get(switchyard, group.identifier)
        assert.isFunction(holder === undefined ? undefined : Reflect.get(holder, endpoint.identifier), `${group.identifier}.${endpoint.identifier}`)
      }
    })
  })

  it("throws on an invalid base URL at construction", () => {
    assert.throws(() => new Switchyard({ baseUrl: "localhost:8080" }), /must start with http:\/\/ or https:\/\//)
  })

  describe("against the gateway on 127.0.0.1", () => {
    let server: RunningServer
    beforeAll(async () => {
      server = await startServer()
    })
    afterAll(() => server?.close())

    it("resolves with decoded values", async () => {
      await using switchyard = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.managementKey })
      assert.strictEqual(switchyard.baseUrl, server.baseUrl)
      assert.strictEqual((await switchyard.health()).status, "ok")
      const { data } = await switchyard.keys.list({ query: { include_disabled: true } })
      assert.isAtLeast(data.length, 2)
      assert.isBoolean(data[0]!.disabled)
    })

    it("embeds, with the request and response shapes of the contract", async () => {
      await using switchyard = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.apiKey })
      const { data, model } = await switchyard.embeddings.create({ payload: { model: "switchyard/local-embed", input: ["hello"], dimensions: 8 } })
      assert.strictEqual(model, "switchyard/local-embed")
      assert.strictEqual((data[0]!.embedding as ReadonlyArray<number>).length, 8)
    })

    it("reranks, with the request and response shapes of the contract", async () => {
      await using switchyard = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.apiKey })
      const documents = ["a train timetable", { text: "plants make sugar from sunlight" }]
      const answer = await switchyard.rerank.create({
        payload: { model: "switchyard/local-rerank", query: "how do plants make sugar", documents, return_documents: true }
      })
      assert.strictEqual(answer.model, "switchyard/local-rerank")
      assert.deepStrictEqual(answer.results.map((r) => r.index), [1, 0])
      assert.strictEqual(answer.results[0]!.document?.text, "plants make sugar from sunlight")
      assert.strictEqual(answer.usage.cost, 0)
    })

    it("lists, counts and gets models without a key, and lists a key's own view with one", async () => {
      await using anonymous = new Switchyard({ baseUrl: server.baseUrl })
      const all = await anonymous.models.list({ query: { output_modalities: "all" } })
      assert.includeMembers(all.data.map((m) => m.id), ["switchyard/local-embed", "switchyard/local-rerank"])
      assert.deepStrictEqual(await anonymous.models.count({ query: { output_modalities: "all" } }), { data: { count: all.total_count } })
      const model = await anonymous.models.get({ params: { id: "switchyard/local-rerank" } })
      assert.deepStrictEqual([model.id, model.object, model.owned_by], ["switchyard/local-rerank", "model", "switchyard"])
      await using keyed = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.apiKey })
      const mine = await keyed.models.listForUser({ query: {} })
      assert.deepStrictEqual(mine.data.map((m) => m.id), ["switchyard/local-embed"])
    })

    it("rejects with the contract's typed error", async () => {
      await using switchyard = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.apiKey })
      const error = await switchyard.keys.list({ query: {} }).then(() => undefined, (e: unknown) => e)
      assert.instanceOf(error, Forbidden)
      assert.strictEqual((error as Forbidden)._tag, "Forbidden")
      assert.include((error as Forbidden).message, "management key")
    })

    it("manages providers and reads the audit log", async () => {
      await using switchyard = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.managementKey })
      const local = await switchyard.providerAdmin.get({ params: { slug: "local" } })
      assert.strictEqual(local.data.source, "config")
      const refused = await switchyard.providerAdmin.delete({ params: { slug: "local" } }).then(() => undefined, (e: unknown) => e)
      assert.instanceOf(refused, Conflict)
      const created = await switchyard.keys.create({ payload: { name: "audited by the client" } })
      const { data, next_cursor } = await switchyard.audit.list({ query: { action: "key.create", limit: 1 } })
      assert.strictEqual(data[0]!.target.id, created.data.hash)
      assert.isNull(next_cursor)
      assert.deepStrictEqual(await switchyard.audit.verify(), { ok: true, checked: data[0]!.id })
    })

    it("adds, lists, updates, disables, tests and removes a provider, its credential never answered", async () => {
      const secret = "sk-client-upstream-secret-4321"
      const upstream: FakeServer = await FakeOpenAi.start({ apiKey: secret })
      try {
        await using switchyard = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.managementKey })
        const provider = {
          slug: "clientco",
          name: "Client Co",
          adapter: "openai",
          base_url: upstream.url,
          data_collection: "deny",
          endpoints: [{ model: "clientco/embed", upstream_model: "embed", pricing: { prompt: "0.00000001" }, dimensions: 8, max_batch_items: 16 }]
        }
        const created = await switchyard.providerAdmin.create({ payload: { ...provider, api_key: "sk-client-wrong-key-0000" } })
        assert.deepInclude(created.data, { slug: "clientco", source: "api", enabled: true, api_key: { set: true, last4: "0000" } })

        const listed = (await switchyard.providers.list()).data.find((p) => p.slug === "clientco")
        assert.deepInclude(listed, { source: "api", enabled: true, active: true, api_key: { set: true, last4: "0000" } })

        // The upstream refuses the first key: the test reports its status per endpoint.
        const refused = await switchyard.providerAdmin.test({ params: { slug: "clientco" } })
        assert.isFalse(refused.data.ok)
        assert.deepInclude(refused.data.endpoints[0], { model: "clientco/embed", ok: false, status: 401 })

        const rotated = await switchyard.providerAdmin.update({ params: { slug: "clientco" }, payload: { name: "Client Co EU", api_key: secret } })
        assert.deepInclude(rotated.data, { name: "Client Co EU", api_key: { set: true, last4: "4321" } })
        const tested = await switchyard.providerAdmin.test({ params: { slug: "clientco" } })
        assert.isTrue(tested.data.ok)
        assert.strictEqual(tested.data.endpoints[0]!.status, 200)
        assert.isAtLeast(tested.data.endpoints[0]!.latency_ms, 0)

        const disabled = await switchyard.providerAdmin.update({ params: { slug: "clientco" }, payload: { enabled: false } })
        assert.deepInclude(disabled.data, { enabled: false, active: false })
        assert.deepInclude((await switchyard.providers.list()).data.find((p) => p.slug === "clientco"), { enabled: false, active: false })

        assert.deepStrictEqual(await switchyard.providerAdmin.delete({ params: { slug: "clientco" } }), { deleted: true })
        const gone = await switchyard.providerAdmin.get({ params: { slug: "clientco" } }).then(() => undefined, (e: unknown) => e)
        assert.instanceOf(gone, NotFound)

        const { data } = await switchyard.audit.list({ query: { target_type: "provider", target_id: "clientco" } })
        assert.deepStrictEqual(data.map((entry) => entry.action).reverse(), ["provider.create", "provider.update", "provider.disable", "provider.delete"])
        assert.notInclude(JSON.stringify([created, listed, refused, rotated, tested, disabled, data]), secret)
        assert.isTrue((await switchyard.audit.verify()).ok)
      } finally {
        await upstream.close()
      }
    })

    it("refuses provider changes to a key that is not an instance administrator", async () => {
      await using standard = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.apiKey })
      const refused = await standard.providerAdmin.create({ payload: { slug: "nope" } }).then(() => undefined, (e: unknown) => e)
      assert.instanceOf(refused, Forbidden)
    })

    it("stops a call when its signal aborts", async () => {
      await using switchyard = new Switchyard({ baseUrl: "http://127.0.0.1:9", retry: { retries: 50, baseDelay: "1 second" } })
      const controller = new AbortController()
      const pending = switchyard.health(undefined, { signal: controller.signal })
      setTimeout(() => controller.abort(), 100)
      const started = Date.now()
      const error = await pending.then(() => undefined, (e: unknown) => e)
      assert.isDefined(error)
      assert.isBelow(Date.now() - started, 5_000)
    })
  })
})
