import { OpenRouter } from "@openrouter/sdk"
import * as SdkErrors from "@openrouter/sdk/models/errors"
import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { costOf, decodeFloat32, type Gateway, startGateway, trio } from "../embeddings/Gateway.ts"

type Slug = "alpha" | "beta" | "gamma"

describe("@openrouter/sdk against Switchyard: embeddings", () => {
  let gateway: Gateway
  const fakes = {} as Record<Slug, FakeUpstream.FakeServer>
  let client: OpenRouter

  beforeAll(async () => {
    for (const slug of ["alpha", "beta", "gamma"] as const) fakes[slug] = await FakeOpenAi.start()
    gateway = await startGateway({
      config: { providers: trio({ alpha: fakes.alpha.url, beta: fakes.beta.url, gamma: fakes.gamma.url }) },
      credits: 10
    })
    client = new OpenRouter({ apiKey: gateway.server.apiKey, serverURL: gateway.server.baseUrl, retryConfig: { strategy: "none" } })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all(Object.values(fakes).map((f) => f.close()))
  })
  afterEach(() => {
    for (const fake of Object.values(fakes)) fake.setBehaviour(FakeUpstream.normal)
  })

  const servedBy = async (provider: Record<string, unknown>) => {
    const before = Object.fromEntries(Object.entries(fakes).map(([slug, f]) => [slug, f.requests.length]))
    const response = await client.embeddings.generate({
      requestBody: { model: "acme/embed", input: ["one two", "three"], provider }
    })
    if (typeof response === "string") throw new Error(`expected JSON, got ${response}`)
    const called = Object.entries(fakes).filter(([slug, f]) => f.requests.length > before[slug]!).map(([slug]) => slug)
    assert.strictEqual(called.length, 1)
    return { slug: called[0] as Slug, response }
  }

  it("embeddings.generate passes the SDK's response validation and its provider preferences steer the route", async () => {
    const cheapest = await servedBy({ sort: "price" })
    assert.strictEqual(cheapest.slug, "beta")
    const { response } = cheapest
    assert.strictEqual(response.object, "list")
    assert.strictEqual(response.data.length, 2)
    assert.deepStrictEqual(response.data.map((d) => d.index), [0, 1])
    assert.strictEqual(response.usage?.promptTokens, 3)
    assert.strictEqual(response.usage?.cost, costOf(3, "0.02"))
    assert.strictEqual(response.usage?.costDetails?.upstreamInferenceCost, costOf(3, "0.02"))
    assert.strictEqual(response.usage?.isByok, false)

    assert.strictEqual((await servedBy({ order: ["gamma"], allowFallbacks: false })).slug, "gamma")
    assert.strictEqual((await servedBy({ dataCollection: "deny", zdr: true })).slug, "gamma")
    assert.strictEqual((await servedBy({ only: ["alpha"] })).slug, "alpha")
    assert.strictEqual((await servedBy({ only: ["ALPHA "] })).slug, "alpha")
    assert.strictEqual((await servedBy({ ignore: ["beta"], sort: "price" })).slug, "gamma")
    assert.strictEqual((await servedBy({ quantizations: ["fp32"] })).slug, "alpha")
    assert.strictEqual((await servedBy({ sort: { by: "exacto", partition: "none" } })).slug, "alpha")
    assert.strictEqual((await servedBy({ order: ["alpha", "beta"], maxPrice: { prompt: "0.05" } })).slug, "beta")
    assert.strictEqual((await servedBy({ order: ["alpha", "beta"], enforceDistillableText: true })).slug, "beta")
    assert.strictEqual((await servedBy({ preferredMaxLatency: { p50: 10 }, preferredMinThroughput: 0.1, sort: "price" })).slug, "beta")
  })

  it("embeddings.generate with base64, dimensions, session and trace", async () => {
    const response = await client.embeddings.generate({
      requestBody: {
        model: "acme/embed",
        input: "hello",
        encodingFormat: "base64",
        dimensions: 8,
        sessionId: "sdk-session",
        trace: { traceId: "sdk-trace" },
        provider: { order: ["alpha"], requireParameters: true }
      }
    })
    if (typeof response === "string") throw new Error("expected JSON")
    const sent = fakes.alpha.requests.at(-1)!
    assert.deepInclude(sent.body as object, { encoding_format: "base64", dimensions: 8 })
    assert.notInclude(sent.raw, "sdk-session")
    assert.notInclude(sent.raw, "sdk-trace")
    assert.deepStrictEqual(decodeFloat32(response.data[0]!.embedding as string), FakeUpstream.vectorFor("embed|hello", 8))
  })

  it("embeddings.listModels passes the SDK's validation", async () => {
    const page = await client.embeddings.listModels()
    const ids = page.result.data.map((m) => m.id)
    assert.include(ids, "acme/embed")
    assert.include(ids, "switchyard/local-embed")
    const model = page.result.data.find((m) => m.id === "acme/embed")!
    assert.strictEqual(model.pricing.prompt, "0.00000002")
    assert.deepStrictEqual(model.architecture.outputModalities, ["embeddings"])
    assert.sameMembers(model.supportedParameters as Array<string>, ["dimensions", "encoding_format", "input_type", "user"])
  })

  it("maps the gateway's error statuses to the SDK's error classes", async () => {
    const failure = (request: Record<string, unknown>, sdk = client) =>
      sdk.embeddings.generate({ requestBody: { model: "acme/embed", input: "x", ...request } as never }).then(
        () => undefined,
        (e: unknown) => e
      )
    const alphaOnly = { provider: { order: ["alpha"], allowFallbacks: false } }

    assert.instanceOf(await failure({ model: "acme/none" }), SdkErrors.NotFoundResponseError)
    assert.instanceOf(await failure({ dimensions: 0 }), SdkErrors.BadRequestResponseError)
    const management = new OpenRouter({ apiKey: gateway.server.managementKey, serverURL: gateway.server.baseUrl })
    assert.instanceOf(await failure({}, management), SdkErrors.ForbiddenResponseError)
    const anonymous = new OpenRouter({ apiKey: "sk-wrong", serverURL: gateway.server.baseUrl })
    assert.instanceOf(await failure({}, anonymous), SdkErrors.UnauthorizedResponseError)

    const upstream: ReadonlyArray<readonly [number, new(...args: Array<never>) => unknown, number]> = [
      [500, SdkErrors.BadGatewayResponseError, 502],
      [503, SdkErrors.ServiceUnavailableResponseError, 503],
      [504, SdkErrors.EdgeNetworkTimeoutResponseError, 524],
      [529, SdkErrors.ProviderOverloadedResponseError, 529],
      [429, SdkErrors.TooManyRequestsResponseError, 429]
    ]
    for (const [status, errorClass, code] of upstream) {
      fakes.alpha.setBehaviour([{ _tag: "Status", status }])
      const error = await failure(alphaOnly)
      assert.instanceOf(error, errorClass, `upstream ${status}`)
      assert.strictEqual((error as { error: { code: number } }).error.code, code)
    }
  })
})
