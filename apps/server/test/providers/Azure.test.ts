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

  // One test: the process holds one Entra ID token source, whose token only this fake issued.
  it.live("with auth entra, a bearer token from DefaultAzureCredential (managed identity), fetched once for many calls and the Batch API", () =>
    Effect.gen(function*() {
      const { server, azure } = yield* started({ batch: {} })
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

      // Azure's Files and Batch API under the same token and api-version.
      const batches = yield* Azure.makeBatch
      const { lines, job } = yield* batches.requests("c0", request("embed-small", texts("batch text")))
      assert.deepStrictEqual(lines.map((l) => JSON.parse(l)), [{ custom_id: "c0", method: "POST", url: "/embeddings", body: { model: "embed-small", input: ["batch text"] } }])
      const fileId = yield* batches.upload(connection, "input", `${lines.join("\n")}\n`)
      const created = yield* batches.create(connection, fileId, { ...job, name: "test" })
      assert.strictEqual(created.state, "pending")
      assert.strictEqual((yield* batches.find(connection, fileId, "test"))?.id, created.id)
      yield* batches.retrieve(connection, created.id)
      const done = yield* batches.retrieve(connection, created.id)
      assert.strictEqual(done.state, "completed")
      const results = yield* batches.results(connection, done)
      assert.deepStrictEqual(results.map((r) => [r.customId, r.status]), [["c0", 200]])
      yield* batches.cleanup(connection, fileId, created.id)
      const batchCalls = server.requests.filter((r) => r.path.startsWith("/openai/files") || r.path.startsWith("/openai/batches"))
      // Upload, create, find, two retrieves, the output; then the input deleted, the batch read, its output deleted.
      assert.strictEqual(batchCalls.length, 9)
      for (const call of batchCalls) {
        assert.include(call.path, "api-version=2024-10-21")
        assert.isUndefined(call.headers["api-key"])
        assert.strictEqual(call.headers.authorization, embedCalls[0]!.headers.authorization)
      }
      assert.strictEqual(server.tokensIssued(), 1)
    }).pipe(overHttp))
})
