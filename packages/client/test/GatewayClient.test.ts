import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Api } from "@switchyard/core/api/Api"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { FetchHttpClient, HttpClient, HttpClientResponse } from "effect/http"
import { HttpApi } from "effect/http-api"
import { type RunningServer, startServer } from "../../../apps/server/test/support/TestServer.ts"
import * as ClientOptions from "../src/ClientOptions.ts"
import { GatewayClient, make } from "../src/GatewayClient.ts"

const operations = () => {
  const found: Array<{ readonly group: string; readonly endpoint: string; readonly topLevel: boolean }> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => found.push({ group: group.identifier, endpoint: endpoint.identifier, topLevel: group.topLevel })
  })
  return found
}

const withEnv = (env: Record<string, string>) => Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))

describe("ClientOptions", () => {
  it.effect("accepts the base URL with or without /api/v1 and a trailing slash", () =>
    Effect.gen(function*() {
      for (const input of ["http://h:8080/api/v1", "http://h:8080/api/v1/", "http://h:8080", "http://h:8080/"]) {
        assert.deepStrictEqual(yield* ClientOptions.parseBaseUrl(input), { baseUrl: "http://h:8080/api/v1", root: "http://h:8080" })
      }
      assert.deepStrictEqual(yield* ClientOptions.parseBaseUrl("https://proxy/sy/api/v1"), { baseUrl: "https://proxy/sy/api/v1", root: "https://proxy/sy" })
    }))

  it.effect("refuses what is not an absolute http(s) URL, naming it", () =>
    Effect.gen(function*() {
      for (const input of ["localhost:8080", "ftp://h/api/v1", "http://h/api/v1?x=1", ""]) {
        const error = yield* Effect.flip(ClientOptions.parseBaseUrl(input))
        assert.strictEqual(error._tag, "InvalidClientOptions")
        assert.include(error.message, JSON.stringify(input))
      }
    }))

  it.effect("takes options over the environment, the environment over the default, and ignores empty variables", () =>
    Effect.gen(function*() {
      const fromDefault = yield* ClientOptions.resolve({}).pipe(withEnv({}))
      assert.strictEqual(fromDefault.baseUrl, ClientOptions.defaultBaseUrl)
      assert.isTrue(fromDefault.apiKey._tag === "None")
      const fromEnv = yield* ClientOptions.resolve({}).pipe(withEnv({ SWITCHYARD_BASE_URL: "http://env:1/api/v1", SWITCHYARD_API_KEY: "sk-env" }))
      assert.strictEqual(fromEnv.baseUrl, "http://env:1/api/v1")
      assert.strictEqual(fromEnv.apiKey._tag === "Some" ? Redacted.value(fromEnv.apiKey.value) : undefined, "sk-env")
      const fromOptions = yield* ClientOptions.resolve({ baseUrl: "http://opt:2", apiKey: "sk-opt", retry: false })
        .pipe(withEnv({ SWITCHYARD_BASE_URL: "http://env:1", SWITCHYARD_API_KEY: "sk-env" }))
      assert.strictEqual(fromOptions.baseUrl, "http://opt:2/api/v1")
      assert.strictEqual(fromOptions.apiKey._tag === "Some" ? Redacted.value(fromOptions.apiKey.value) : undefined, "sk-opt")
      assert.strictEqual(fromOptions.retry.retries, 0)
      const empty = yield* ClientOptions.resolve({}).pipe(withEnv({ SWITCHYARD_BASE_URL: " ", SWITCHYARD_API_KEY: "" }))
      assert.strictEqual(empty.baseUrl, ClientOptions.defaultBaseUrl)
      assert.isTrue(empty.apiKey._tag === "None")
    }))
})

describe("GatewayClient", () => {
  it.effect("sends the headers of the options with every request, beside the key and its own User-Agent", () =>
    Effect.gen(function*() {
      const seen: Array<Record<string, string>> = []
      const capture = HttpClient.make((request) => {
        seen.push({ ...request.headers })
        return Effect.succeed(HttpClientResponse.fromWeb(request, Response.json({ status: "ok", checks: { store: { status: "up" } } })))
      })
      const client = yield* make({ baseUrl: "http://127.0.0.1:1", apiKey: "sk-test", headers: { "x-csrf-token": "t0ken" }, retry: false })
        .pipe(Effect.provideService(HttpClient.HttpClient, capture))
      yield* Effect.ignore(client.health())
      yield* Effect.ignore(client.keys.list({ query: {} }))
      assert.strictEqual(seen.length, 2)
      for (const headers of seen) {
        assert.strictEqual(headers["x-csrf-token"], "t0ken")
        assert.match(headers["user-agent"] ?? "", /^switchyard-client\//u)
      }
      assert.strictEqual(seen[1]!.authorization, "Bearer sk-test")
    }))

  it.effect("has a method for every operation of the contract", () =>
    Effect.gen(function*() {
      const client = yield* make({ baseUrl: "http://127.0.0.1:1" }).pipe(Effect.provide(FetchHttpClient.layer))
      const all = operations()
      assert.isAbove(all.length, 1)
      for (const { endpoint, group, topLevel } of all) {
        const holder: object | undefined = topLevel ? client : Reflect.get(client, group)
        assert.isFunction(holder === undefined ? undefined : Reflect.get(holder, endpoint), `${group}.${endpoint}`)
      }
    }))
})

describe("GatewayClient against the gateway on 127.0.0.1", () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server?.close())

  const as = (key: string | undefined) => GatewayClient.layerFetch({ baseUrl: server.baseUrl, apiKey: key })
  const run = <A, E>(key: string | undefined, f: (client: GatewayClient["Service"]) => Effect.Effect<A, E>) =>
    Effect.flatMap(GatewayClient, f).pipe(Effect.provide(as(key)))

  it.live("answers health without a key, at the origin as well as at the base URL", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* run(undefined, (client) => client.health())).status, "ok")
      const atOrigin = yield* Effect.flatMap(GatewayClient, (client) => client.health())
        .pipe(Effect.provide(GatewayClient.layerFetch({ baseUrl: server.origin })))
      assert.deepStrictEqual(atOrigin.checks.store, { status: "up" })
      assert.strictEqual(atOrigin.status, "ok")
    }))

  it.live("lists keys with the management key, decoded by the contract", () =>
    Effect.gen(function*() {
      const { data } = yield* run(server.managementKey, (client) => client.keys.list({ query: {} }))
      assert.deepStrictEqual(data.map((k) => k.name).slice(0, 2), ["Bootstrap management key", "Bootstrap API key"])
      const page = yield* run(server.managementKey, (client) => client.keys.list({ query: { offset: 1 } }))
      assert.deepStrictEqual(page.data.map((k) => k.hash), data.slice(1).map((k) => k.hash))
    }))

  it.live("fails with the contract's typed errors, carrying the server's message", () =>
    Effect.gen(function*() {
      const forbidden = yield* run(server.apiKey, (client) => client.keys.list({ query: {} })).pipe(Effect.flip)
      assert.strictEqual(forbidden._tag, "Forbidden")
      assert.include(forbidden.message, "management key")
      const unauthorized = yield* run(undefined, (client) => client.keys.list({ query: {} })).pipe(Effect.flip)
      assert.strictEqual(unauthorized._tag, "Unauthorized")
      const unknown = yield* run(`sk-sy-v1-${"0".repeat(64)}`, (client) => client.keys.list({ query: {} })).pipe(Effect.flip)
      assert.strictEqual(unknown._tag, "Unauthorized")
      const notFound = yield* run(server.managementKey, (client) => client.keys.list({ query: { workspace_id: "00000000-0000-4000-8000-000000000000" } })).pipe(Effect.flip)
      assert.strictEqual(notFound._tag, "NotFound")
    }))

  it.live("reads the base URL and the key from SWITCHYARD_BASE_URL and SWITCHYARD_API_KEY", () =>
    Effect.gen(function*() {
      const { data } = yield* Effect.flatMap(GatewayClient, (client) => client.keys.list({ query: {} })).pipe(
        Effect.provide(GatewayClient.layerFetch()),
        withEnv({ SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.managementKey })
      )
      assert.isAtLeast(data.length, 2)
    }))

  it.live("reports an unreachable gateway as a transport failure after its retries", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flatMap(GatewayClient, (client) => client.health()).pipe(
        Effect.provide(GatewayClient.layerFetch({ baseUrl: "http://127.0.0.1:9/api/v1", retry: { baseDelay: "1 millis", maxDelay: "2 millis" } })),
        Effect.flip
      )
      assert.strictEqual(error._tag, "HttpClientError")
      assert.strictEqual(error._tag === "HttpClientError" ? error.reason._tag : undefined, "TransportError")
    }))

  it.effect("fails to build from an invalid base URL", () =>
    Effect.gen(function*() {
      const error = yield* Layer.build(GatewayClient.layerFetch({ baseUrl: "nope" })).pipe(Effect.scoped, Effect.flip)
      assert.strictEqual(error._tag, "InvalidClientOptions")
    }))
})

describe("GatewayClient: every operation against the gateway on 127.0.0.1", () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server?.close())

  const management = <A, E>(f: (client: GatewayClient["Service"]) => Effect.Effect<A, E>) =>
    Effect.flatMap(GatewayClient, f).pipe(Effect.provide(GatewayClient.layerFetch({ baseUrl: server.baseUrl, apiKey: server.managementKey })))
  const standard = <A, E>(f: (client: GatewayClient["Service"]) => Effect.Effect<A, E>) =>
    Effect.flatMap(GatewayClient, f).pipe(Effect.provide(GatewayClient.layerFetch({ baseUrl: server.baseUrl, apiKey: server.apiKey })))

  it.live("manages keys: create, get, update, delete, current", () =>
    Effect.gen(function*() {
      const created = yield* management((client) => client.keys.create({ payload: { name: "from-client", limit: 5, limit_reset: "daily" } }))
      assert.match(created.key, /^sk-sy-v1-[0-9a-f]{64}$/u)
      assert.strictEqual(created.data.limit, 5)
      const hash = created.data.hash
      const got = yield* management((client) => client.keys.get({ params: { hash } }))
      assert.strictEqual(got.data.name, "from-client")
      const updated = yield* management((client) => client.keys.update({ params: { hash }, payload: { disabled: true, limit: null } }))
      assert.deepStrictEqual([updated.data.disabled, updated.data.limit], [true, null])
      const current = yield* standard((client) => client.keys.current())
      assert.strictEqual(current.data.is_management_key, false)
      assert.deepStrictEqual(yield* management((client) => client.keys.delete({ params: { hash } })), { deleted: true })
      const gone = yield* management((client) => client.keys.get({ params: { hash } })).pipe(Effect.flip)
      assert.strictEqual(gone._tag, "NotFound")
    }))

  it.live("tops up and reads credits, and manages provider credentials", () =>
    Effect.gen(function*() {
      const before = yield* management((client) => client.credits.get({ query: {} }))
      const after = yield* management((client) => client.credits.add({ payload: { amount: "2.5" } }))
      assert.closeTo(after.data.total_credits - before.data.total_credits, 2.5, 1e-9)
      const stored = yield* management((client) => client.byok.create({ payload: { provider: "openai", key: "sk-upstream-secret", name: "team" } }))
      assert.notInclude(JSON.stringify(stored), "sk-upstream-secret")
      const id = stored.data.id
      assert.strictEqual((yield* management((client) => client.byok.get({ params: { id } }))).data.name, "team")
      assert.isTrue((yield* management((client) => client.byok.update({ params: { id }, payload: { disabled: true } }))).data.disabled)
      assert.isTrue((yield* management((client) => client.byok.list({ query: {} }))).data.some((k) => k.id === id))
      yield* management((client) => client.byok.delete({ params: { id } }))
      const gone = yield* management((client) => client.byok.get({ params: { id } })).pipe(Effect.flip)
      assert.strictEqual(gone._tag, "NotFound")
    }))

  it.live("manages interns: create, list, get, update, suspend, delete, with the string-code errors", () =>
    Effect.gen(function*() {
      const created = yield* standard((client) => client.interns.create({ payload: { name: "client-bot", description: "d" } }))
      assert.strictEqual(created.status, "stopped")
      const listed = yield* standard((client) => client.interns.list({ query: {} }))
      assert.isTrue(listed.data.some((i) => i.id === created.id))
      const updated = yield* standard((client) => client.interns.update({ params: { internId: created.id }, payload: { description: null, model: "openai/gpt-4o" } }))
      assert.deepStrictEqual([updated.description, updated.model], [null, "openai/gpt-4o"])
      assert.deepStrictEqual(yield* standard((client) => client.interns.suspend({ params: { internId: created.id } })), { suspended: true })
      const taken = yield* standard((client) => client.interns.create({ payload: { name: "client-bot" } })).pipe(Effect.flip)
      assert.strictEqual(taken._tag, "NameTaken")
      assert.deepStrictEqual(yield* standard((client) => client.interns.delete({ params: { internId: created.id }, payload: null })), { deleting: true })
      const missing = yield* standard((client) => client.interns.get({ params: { internId: "00000000-0000-7000-8000-000000000000" } })).pipe(Effect.flip)
      assert.strictEqual(missing._tag, "InternNotFound")
    }))

  it.live("embeds with the built-in local model, plans a route and lists models", () =>
    Effect.gen(function*() {
      const response = yield* standard((client) => client.embeddings.create({ payload: { model: "switchyard/local-embed", input: ["one", "two"], dimensions: 16 } }))
      assert.deepStrictEqual(response.data.map((d) => (typeof d.embedding === "string" ? -1 : d.embedding.length)), [16, 16])
      const plan = yield* standard((client) => client.embeddings.plan({ payload: { model: "switchyard/local-embed", input: "one" } }))
      assert.strictEqual(plan.object, "embeddings.plan")
      assert.isAbove(plan.attempts.length, 0)
      const models = yield* standard((client) => client.embeddings.listModels({ query: {} }))
      assert.isTrue(models.data.some((m) => m.id === "switchyard/local-embed"))
      const unknown = yield* standard((client) => client.embeddings.create({ payload: { model: "nobody/none", input: "x" } })).pipe(Effect.flip)
      assert.strictEqual(unknown._tag, "NotFound")
    }))
})

describe("GatewayClient against a rate-limited gateway", () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_RATE_LIMIT: "3/2s" } })
  })
  afterAll(() => server?.close())

  const standard = <A, E>(f: (client: GatewayClient["Service"]) => Effect.Effect<A, E>) =>
    Effect.flatMap(GatewayClient, f).pipe(Effect.provide(GatewayClient.layerFetch({ baseUrl: server.baseUrl, apiKey: server.apiKey })))

  // The gateway's refusals, as its metrics count them.
  const refusals = Effect.promise(async () => {
    const text = await (await fetch(`${server.origin}/metrics`)).text()
    return [...text.matchAll(/^switchyard_rate_limit_refusals_total\{[^}]*\} (\d+)/gmu)].reduce((n, m) => n + Number(m[1]), 0)
  })

  it.live("waits out the gateway's rate limit (429 with Retry-After) instead of failing", () =>
    Effect.gen(function*() {
      const before = yield* refusals
      for (let i = 0; i < 7; i++) yield* standard((client) => client.keys.current())
      // Seven calls against three per window: the gateway refused some, and the client retried
      // each refusal until it was served.
      assert.isAbove((yield* refusals) - before, 0)
    }))
})
