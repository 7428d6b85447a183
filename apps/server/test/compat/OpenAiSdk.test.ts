import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import OpenAI from "openai"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { costOf, decodeFloat32, endpoint, type Gateway, lastBody, provider, startGateway } from "../embeddings/Gateway.ts"

describe("openai SDK against Switchyard: embeddings", () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  let client: OpenAI

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", alpha.url, {}, [
            endpoint("acme/embed", {
              upstream_model: "embed",
              pricing: { prompt: "0.1" },
              supported_parameters: ["dimensions", "encoding_format", "user"]
            }),
            // A Matryoshka model at an endpoint that takes no dimensions: the gateway cuts.
            endpoint("acme/nested", { upstream_model: "nested", pricing: { prompt: "0.1" }, supported_parameters: ["encoding_format"], matryoshka: true })
          ])
        ]
      },
      credits: 10
    })
    client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
  })
  afterAll(async () => {
    await gateway.close()
    await alpha.close()
  })

  const texts = ["the quick brown fox", "jumps"]
  const vectors = texts.map((t) => FakeUpstream.vectorFor(`embed|${t}`, 16))

  it("embeddings.create by default asks for base64, which the gateway asks of the upstream, and decodes to the same floats", async () => {
    const response = await client.embeddings.create({ model: "acme/embed", input: texts })
    assert.strictEqual(lastBody(alpha).encoding_format, "base64")
    assert.strictEqual(response.object, "list")
    assert.strictEqual(response.model, "acme/embed")
    assert.deepStrictEqual(response.data.map((d) => d.index), [0, 1])
    assert.deepStrictEqual(response.data.map((d) => Array.from(d.embedding)), vectors)
    assert.strictEqual(response.usage.prompt_tokens, 5)
    assert.strictEqual(response.usage.total_tokens, 5)
    assert.propertyVal(response.usage, "cost", costOf(5, "0.1"))
  })

  it("embeddings.create with float and with base64 and dimensions", async () => {
    const floats = await client.embeddings.create({ model: "acme/embed", input: texts, encoding_format: "float" })
    assert.notProperty(lastBody(alpha), "encoding_format")
    assert.deepStrictEqual(floats.data.map((d) => d.embedding), vectors)

    const encoded = await client.embeddings.create({ model: "acme/embed", input: "jumps", encoding_format: "base64" })
    // The SDK types a base64 embedding as numbers; it is the string the gateway sent.
    assert.strictEqual<unknown>(encoded.data[0]!.embedding, FakeUpstream.float32Base64(vectors[1]!))

    const narrow = await client.embeddings.create({ model: "acme/embed", input: "jumps", dimensions: 4, encoding_format: "float" })
    assert.strictEqual(lastBody(alpha).dimensions, 4)
    assert.strictEqual(narrow.data[0]!.embedding.length, 4)
  })

  it("dimensions and encoding_format work unchanged where the gateway cuts the vector, and output_dtype passes as an extra field", async () => {
    const full = FakeUpstream.vectorFor("nested|jumps", 16)
    const norm = Math.sqrt(full.slice(0, 4).reduce((n, x) => n + x * x, 0))
    for (const encoding_format of ["base64", "float"] as const) {
      const cut = await client.embeddings.create({ model: "acme/nested", input: "jumps", dimensions: 4, encoding_format })
      assert.notProperty(lastBody(alpha), "dimensions")
      const embedding = cut.data[0]!.embedding as unknown
      const values = typeof embedding === "string" ? decodeFloat32(embedding) : embedding as Array<number>
      values.forEach((x, i) => {
        assert.approximately(x, full[i]! / norm, 1e-6)
      })
    }
    // The SDK's own default (base64, decoded by it) gets the same four floats.
    const decoded = await client.embeddings.create({ model: "acme/nested", input: "jumps", dimensions: 4 })
    Array.from(decoded.data[0]!.embedding).forEach((x, i) => {
      assert.approximately(x, full[i]! / norm, 1e-6)
    })
    const typed = await client.embeddings.create({ model: "acme/nested", input: "jumps", dimensions: 8, encoding_format: "float", output_dtype: "ubinary" } as OpenAI.EmbeddingCreateParams)
    assert.strictEqual((typed.data[0]!.embedding as Array<number>).length, 1)
  })

  it("models.retrieve takes an id with a slash (the SDK sends it as one encoded path segment), and the listing needs no valid key", async () => {
    const model = await client.models.retrieve("acme/embed")
    assert.strictEqual(model.id, "acme/embed")
    assert.strictEqual(model.object, "model")
    assert.strictEqual(model.owned_by, "acme")
    assert.isNumber(model.created)
    assert.deepNestedPropertyVal(model, "architecture.output_modalities", ["embeddings"])
    // The same model written as two path segments, and a rerank model, answer the same way.
    const raw = await fetch(`${gateway.server.baseUrl}/models/ACME/embed`)
    assert.strictEqual(raw.status, 200)
    assert.strictEqual(((await raw.json()) as { id: string }).id, "acme/embed")
    assert.strictEqual((await client.models.retrieve("switchyard/local-rerank")).owned_by, "switchyard")

    const missing = await client.models.retrieve("acme/none").then(() => undefined, (e: unknown) => e)
    assert.instanceOf(missing, OpenAI.NotFoundError)
    assert.include((missing as Error).message, "acme/none")

    const anonymous = new OpenAI({ apiKey: "sk-not-a-key", baseURL: gateway.server.baseUrl, maxRetries: 0 })
    const ids: Array<string> = []
    for await (const m of anonymous.models.list()) ids.push(m.id)
    assert.includeMembers(ids, ["acme/embed", "switchyard/local-embed"])
    assert.strictEqual((await anonymous.models.retrieve("switchyard/local-embed")).id, "switchyard/local-embed")
  })

  it("maps the gateway's errors to the SDK's error classes", async () => {
    const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (e: unknown) => e)

    const notFound = await failure(client.embeddings.create({ model: "acme/none", input: "x" }))
    assert.instanceOf(notFound, OpenAI.NotFoundError)
    assert.strictEqual((notFound as InstanceType<typeof OpenAI.NotFoundError>).status, 404)

    const badRequest = await failure(client.embeddings.create({ model: "acme/embed", input: "" }))
    assert.instanceOf(badRequest, OpenAI.BadRequestError)
    assert.include((badRequest as Error).message, "input")

    const management = new OpenAI({ apiKey: gateway.server.managementKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
    assert.instanceOf(await failure(management.embeddings.create({ model: "acme/embed", input: "x" })), OpenAI.PermissionDeniedError)

    const anonymous = new OpenAI({ apiKey: "sk-wrong", baseURL: gateway.server.baseUrl, maxRetries: 0 })
    assert.instanceOf(await failure(anonymous.embeddings.create({ model: "acme/embed", input: "x" })), OpenAI.AuthenticationError)

    alpha.setBehaviour([{ _tag: "Status", status: 500 }])
    const upstream = await failure(client.embeddings.create({ model: "acme/embed", input: "x" }))
    assert.instanceOf(upstream, OpenAI.InternalServerError)
    assert.strictEqual((upstream as InstanceType<typeof OpenAI.InternalServerError>).status, 502)
  })
})
