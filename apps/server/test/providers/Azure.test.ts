import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as FakeAzureOpenAi from "../fakes/FakeAzureOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { overHttp } from "../support/AdapterFixture.ts"
import * as Adapters from "../../src/providers/Adapters.ts"
import * as Azure from "../../src/providers/Azure.ts"
import { request, texts } from "./ProviderHarness.ts"

const key = "azure-fake-key"

const provider = (baseUrl: string, extra: Partial<Adapters.ProviderAccess> = {}): Adapters.ProviderAccess => ({
  slug: "azure",
  adapter: "azure",
  base_url: baseUrl,
  api_version: "2024-10-21",
  ...extra
})

const started = Effect.fnUntraced(function*(options: FakeAzureOpenAi.Options = {}) {
  const server = yield* Effect.acquireRelease(Effect.promise(() => FakeAzureOpenAi.start(options)), (s) => Effect.promise(() => s.close()))
  return { server, azure: yield* Azure.make }
})

describe("Azure OpenAI", () => {
  it.live("posts OpenAI's body to the deployment's path with api-version and the api-key header", () =>
    Effect.gen(function*() {
      const { server, azure } = yield* started()
      const connection = Adapters.connectionOf(provider(server.url), Redacted.make(key))
      const result = yield* azure.embed(connection, request("embed-small", texts("hello world", "x"), { dimensions: 8 }))
      const sent = server.requests[0]!
      assert.strictEqual(sent.path, "/openai/deployments/embed-small/embeddings?api-version=2024-10-21")
      assert.strictEqual(sent.headers["api-key"], key)
      assert.isUndefined(sent.headers.authorization)
      assert.deepStrictEqual(sent.body, { model: "embed-small", input: ["hello world", "x"], dimensions: 8 })
      assert.deepStrictEqual(result.embeddings[1]!.embedding, FakeUpstream.vectorFor("text-embedding-3-small|x", 8))
      assert.strictEqual(result.promptTokens, 3)
    }).pipe(overHttp))

  it.live("a wrong key is the provider refusing the gateway's credentials, the key nowhere in the failure", () =>
    Effect.gen(function*() {
      const { server, azure } = yield* started()
      const wrong = "azure-wrong-key-0123456789"
      const failure = yield* Effect.flip(azure.embed(Adapters.connectionOf(provider(server.url), Redacted.make(wrong)), request("embed-small", texts("x"))))
      assert.deepStrictEqual({ ...failure.reason }, { _tag: "AuthFailed", upstream_status: 401 })
      assert.notInclude(JSON.stringify(failure), wrong)
    }).pipe(overHttp))

  it.live("with auth entra, a bearer token from DefaultAzureCredential (managed identity), fetched once for many calls", () =>
    Effect.gen(function*() {
      const { server, azure } = yield* started()
      const saved = { endpoint: process.env.IDENTITY_ENDPOINT, header: process.env.IDENTITY_HEADER }
      process.env.IDENTITY_ENDPOINT = `${server.url}/msi/token`
      process.env.IDENTITY_HEADER = "fake-identity-header"
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const [name, value] of [["IDENTITY_ENDPOINT", saved.endpoint], ["IDENTITY_HEADER", saved.header]] as const) {
            if (value === undefined) delete process.env[name]
            else process.env[name] = value
          }
        })
      )
      const connection = Adapters.connectionOf(provider(server.url, { auth: "entra" }), undefined)
      for (let i = 0; i < 5; i++) {
        const result = yield* azure.embed(connection, request("embed-small", texts(`text ${i}`), { dimensions: 4 }))
        assert.deepStrictEqual(result.embeddings[0]!.embedding, FakeUpstream.vectorFor(`text-embedding-3-small|text ${i}`, 4))
      }
      const embedCalls = server.requests.filter((r) => r.path.startsWith("/openai/"))
      assert.strictEqual(embedCalls.length, 5)
      assert.isUndefined(embedCalls[0]!.headers["api-key"])
      assert.match(embedCalls[0]!.headers.authorization ?? "", /^Bearer .+/u)
      assert.strictEqual(server.tokensIssued(), 1)
    }).pipe(overHttp))
})
