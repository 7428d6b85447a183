import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeGemini from "../fakes/FakeGemini.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVoyage from "../fakes/FakeVoyage.ts"
import * as Adapters from "../../src/providers/Adapters.ts"
import { fixture, httpClient, request, texts } from "./ProviderHarness.ts"

const env = (vars: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: vars }))

describe("Adapters", () => {
  it.effect("builds a connection from a catalog provider, reading its key from the environment", () =>
    Effect.gen(function*() {
      const conn = yield* Adapters.connectionFor(
        { adapter: "openai", base_url: "http://127.0.0.1:18080/v1", api_key_env: "ALPHA_API_KEY", headers: { "x-org": "o" } },
        { timeoutMs: 1234 }
      )
      assert.strictEqual(conn.baseUrl, "http://127.0.0.1:18080/v1")
      assert.strictEqual(Redacted.value(conn.apiKey!), "sk-alpha")
      assert.deepStrictEqual(conn.headers, { "x-org": "o" })
      assert.strictEqual(conn.timeoutMs, 1234)
      assert.notInclude(String(conn.apiKey), "sk-alpha")
    }).pipe(env({ ALPHA_API_KEY: "sk-alpha" })))

  it.effect("defaults the base URL per adapter and leaves an unset or empty key undefined", () =>
    Effect.gen(function*() {
      const cohere = yield* Adapters.connectionFor({ adapter: "cohere", api_key_env: "MISSING_KEY" }, { timeoutMs: 1 })
      assert.strictEqual(cohere.baseUrl, "https://api.cohere.com/v2")
      assert.isUndefined(cohere.apiKey)
      const empty = yield* Adapters.connectionFor({ adapter: "gemini", api_key_env: "EMPTY_KEY" }, { timeoutMs: 1 })
      assert.strictEqual(empty.baseUrl, "https://generativelanguage.googleapis.com/v1beta")
      assert.isUndefined(empty.apiKey)
      const local = yield* Adapters.connectionFor({ adapter: "local", api_key_env: null }, { timeoutMs: 1 })
      assert.isUndefined(local.apiKey)
      assert.strictEqual(Adapters.defaultBaseUrls.voyage, "https://api.voyageai.com/v1")
      assert.strictEqual(Adapters.defaultBaseUrls.openai, "https://api.openai.com/v1")
    }).pipe(env({ EMPTY_KEY: "" })))

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
        const conn = yield* Adapters.connectionFor(
          { adapter: c.id, base_url: server.url, api_key_env: `KEY_${c.id.toUpperCase()}` },
          { timeoutMs: 5_000 }
        )
        const result = yield* table[c.id].embed(conn, request(c.model, texts("a b c"), { dimensions: 4 }))
        assert.strictEqual(result.embeddings.length, 1, c.id)
        assert.strictEqual(server.requests.length, 1, c.id)
      }
      const local = yield* table.local.embed(
        yield* Adapters.connectionFor({ adapter: "local" }, { timeoutMs: 5_000 }),
        request("local-hash", texts("a b c"))
      )
      assert.strictEqual((local.embeddings[0]!.embedding as ReadonlyArray<number>).length, 256)
    }).pipe(
      Effect.scoped,
      Effect.provide(Adapters.Adapters.layer),
      Effect.provide(httpClient),
      env({ KEY_OPENAI: "k1", KEY_COHERE: "k2", KEY_VOYAGE: "k3", KEY_GEMINI: "k4" })
    ))

  it.live("a Jina-style base64 answer is forwarded as is", () =>
    Effect.gen(function*() {
      const table = yield* Adapters.Adapters
      const server = yield* FakeUpstream.scoped(() => FakeOpenAi.start())
      server.setBehaviour({ _tag: "Status", status: 200, body: fixture("jina/embeddings-base64.json") })
      const conn = yield* Adapters.connectionFor({ adapter: "openai", base_url: server.url, api_key_env: "K" }, { timeoutMs: 5_000 })
      const result = yield* table.openai.embed(conn, request("jina-embeddings-v3", texts("a", "b"), { encodingFormat: "base64", dimensions: 3 }))
      assert.deepStrictEqual(result.embeddings, [
        { index: 0, embedding: "AAAAPwAAgL4AAMA/" },
        { index: 1, embedding: "AACAPwAAAAAAAIC/" }
      ])
      assert.strictEqual(result.promptTokens, 6)
    }).pipe(Effect.scoped, Effect.provide(Adapters.Adapters.layer), Effect.provide(httpClient), env({ K: "sk-fake" })))
})
