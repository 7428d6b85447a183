import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeGemini from "../fakes/FakeGemini.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVoyage from "../fakes/FakeVoyage.ts"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import * as CatalogLoader from "../../src/catalog/CatalogLoader.ts"
import * as Adapters from "../../src/providers/Adapters.ts"
import * as Route from "../../src/pipeline/Route.ts"
import { fixture, httpClient, request, texts } from "./ProviderHarness.ts"

const env = (vars: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: vars }))

describe("Adapters", () => {
  it.effect("builds a connection from a loaded catalog provider, its key read from the environment", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-adapters-"))
      const path = NodePath.join(dir, "config.json")
      const endpoint = {
        model: "alpha/embed",
        upstream_model: "embed",
        pricing: { prompt: "0.02" },
        quantization: "fp32",
        dimensions: 8,
        supported_parameters: ["dimensions"],
        max_batch_items: 16
      }
      const provider = (slug: string, extra: Record<string, unknown>) => ({
        slug,
        name: slug,
        data_collection: "deny",
        endpoints: [endpoint],
        ...extra
      })
      Fs.writeFileSync(path, JSON.stringify({
        providers: [
          provider("alpha", {
            adapter: "openai",
            dialect: "mistral",
            timeout_ms: 1234,
            base_url: "http://127.0.0.1:18080/v1",
            api_key_env: "ALPHA_API_KEY",
            headers: { "x-org": "o" }
          }),
          provider("beta", { adapter: "cohere", base_url: "https://api.cohere.com/v2", api_key_env: "MISSING_KEY" }),
          provider("gamma", { adapter: "gemini", base_url: "https://generativelanguage.googleapis.com/v1beta", api_key_env: "EMPTY_KEY" })
        ]
      }))
      const loaded = yield* CatalogLoader.load.pipe(
        env({ SWITCHYARD_CONFIG: path, ALPHA_API_KEY: "sk-alpha", EMPTY_KEY: "" }),
        Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      )
      const alpha = loaded.catalog.providers.find((p) => p.slug === "alpha")!
      const conn = Adapters.connectionOf(alpha, loaded.credentials.get("alpha"))
      assert.strictEqual(conn.baseUrl, "http://127.0.0.1:18080/v1")
      assert.strictEqual(Redacted.value(conn.apiKey!), "sk-alpha")
      assert.deepStrictEqual(conn.headers, { "x-org": "o" })
      // An attempt's time limit: the provider's own, else the gateway's.
      assert.strictEqual(Route.attemptLimitMs(alpha, 15_000), 1234)
      assert.strictEqual(Route.attemptLimitMs(loaded.catalog.providers.find((p) => p.slug === "beta")!, 15_000), 15_000)
      assert.strictEqual(conn.dialect, "mistral")
      assert.notInclude(String(conn.apiKey), "sk-alpha")
      // An unset or empty key leaves the provider without a credential, and inactive.
      assert.isFalse(loaded.credentials.has("beta"))
      assert.isFalse(loaded.credentials.has("gamma"))
      assert.isFalse(loaded.active.has("beta"))
      assert.isFalse(loaded.active.has("gamma"))
    }))

  it("defaults the base URL per adapter", () => {
    assert.strictEqual(Adapters.connectionOf({ adapter: "cohere" }, undefined).baseUrl, "https://api.cohere.com/v2")
    assert.strictEqual(Adapters.connectionOf({ adapter: "gemini" }, undefined).baseUrl, "https://generativelanguage.googleapis.com/v1beta")
    assert.isUndefined(Adapters.connectionOf({ adapter: "local", api_key_env: null }, undefined).apiKey)
    assert.strictEqual(Adapters.defaultBaseUrls.voyage, "https://api.voyageai.com/v1")
    assert.strictEqual(Adapters.defaultBaseUrls.openai, "https://api.openai.com/v1")
  })

  it.live("the table reaches every wire format by its adapter id", () =>
    Effect.gen(function*() {
      const table = yield* Adapters.Adapters
      const cases = [
        { id: "openai", start: () => FakeOpenAi.start({ apiKey: "k1", defaultWidth: 4 }), key: "k1", model: "m" },
        { id: "cohere", start: () => FakeCohere.start({ apiKey: "k2" }), key: "k2", model: "embed-english-light-v3.0" },
        { id: "voyage", start: () => FakeVoyage.start({ apiKey: "k3" }), key: "k3", model: "voyage-3.5" },
        { id: "gemini", start: () => FakeGemini.start({ apiKey: "k4" }), key: "k4", model: "gemini-embedding-001" }
      ] as const
      for (const c of cases) {
        const server = yield* FakeUpstream.scoped(c.start)
        const conn = Adapters.connectionOf({ adapter: c.id, base_url: server.url }, Redacted.make(c.key))
        const result = yield* table[c.id].embed(conn, request(c.model, texts("a b c"), { dimensions: 4 }))
        assert.strictEqual(result.embeddings.length, 1, c.id)
        assert.strictEqual(server.requests.length, 1, c.id)
      }
      const local = yield* table.local.embed(
        Adapters.connectionOf({ adapter: "local" }, undefined),
        request("local-hash", texts("a b c"))
      )
      assert.strictEqual((local.embeddings[0]!.embedding as ReadonlyArray<number>).length, 256)
    }).pipe(Effect.scoped, Effect.provide(Adapters.Adapters.layer), Effect.provide(httpClient)))

  it.live("a Jina-style base64 answer is forwarded as is", () =>
    Effect.gen(function*() {
      const table = yield* Adapters.Adapters
      const server = yield* FakeUpstream.scoped(() => FakeOpenAi.start())
      server.setBehaviour({ _tag: "Status", status: 200, body: fixture("jina/embeddings-base64.json") })
      const conn = Adapters.connectionOf({ adapter: "openai", base_url: server.url }, Redacted.make("sk-fake"))
      const result = yield* table.openai.embed(conn, request("jina-embeddings-v3", texts("a", "b"), { encodingFormat: "base64", dimensions: 3 }))
      assert.deepStrictEqual(result.embeddings, [
        { index: 0, embedding: "AAAAPwAAgL4AAMA/" },
        { index: 1, embedding: "AACAPwAAAAAAAIC/" }
      ])
      assert.strictEqual(result.promptTokens, 6)
    }).pipe(Effect.scoped, Effect.provide(Adapters.Adapters.layer), Effect.provide(httpClient)))
})
