import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { startServer, type RunningServer } from "../support/TestServer.ts"
import { costOf, decodeFloat32, endpoint, type Gateway, lastBody, provider, request, servedBy, startGateway } from "./Gateway.ts"

const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

const vector = (text: string, width = 16) => FakeUpstream.vectorFor(`embed|${text}`, width)

const okBody = (data: ReadonlyArray<{ readonly index: number; readonly embedding: unknown }>, usage: unknown = { prompt_tokens: 3, total_tokens: 3 }) => ({
  _tag: "Status" as const,
  status: 200,
  body: JSON.stringify({ object: "list", model: "embed", data: data.map((d) => ({ object: "embedding", ...d })), usage })
})

describe("embeddings responses", () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  let bravo: FakeUpstream.FakeServer
  let coral: FakeUpstream.FakeServer
  let delta: FakeUpstream.FakeServer

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    bravo = await FakeOpenAi.start()
    coral = await FakeCohere.start({ apiKey: "sk-fake" })
    delta = await FakeOpenAi.start()
    const dims = ["dimensions", "encoding_format", "input_type", "user"]
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", alpha.url, {}, [
            endpoint("acme/embed", {
              upstream_model: "embed",
              pricing: { prompt: "0.1", image: "0.0001" },
              supported_parameters: dims,
              input_modalities: ["text", "image"]
            })
          ]),
          provider("bravo", bravo.url, {}, [
            endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.2" }, supported_parameters: dims }),
            endpoint("acme/fixed", { upstream_model: "embed", supported_parameters: ["encoding_format"] }),
            endpoint("acme/mixed", { upstream_model: "embed", pricing: { prompt: "0.001" }, supported_parameters: ["encoding_format"] })
          ]),
          provider("delta", delta.url, {}, [
            endpoint("acme/mixed", { upstream_model: "embed", pricing: { prompt: "1" }, supported_parameters: dims })
          ]),
          { ...provider("coral", coral.url, {}, [endpoint("acme/coral", { upstream_model: "embed-english-light-v3.0", dimensions: 384 })]), adapter: "cohere" }
        ]
      },
      credits: 100
    })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all([alpha.close(), bravo.close(), coral.close(), delta.close()])
  })
  afterEach(() => {
    for (const fake of [alpha, bravo, coral, delta]) fake.setBehaviour(FakeUpstream.normal)
  })

  const only = (slug: string) => ({ order: [slug], allow_fallbacks: false })

  it("returns one vector per input, in input order, with index, model, id and usage", async () => {
    const texts = ["first", "second words", "third one here"]
    const reply = await gateway.embed({ model: "acme/embed", input: texts, provider: only("alpha") })
    assert.strictEqual(reply.status, 200, reply.text)
    const body = reply.json
    assert.strictEqual(body.object, "list")
    assert.strictEqual(body.model, "acme/embed")
    assert.match(body.id, /^gen-emb-/)
    assert.strictEqual(reply.headers.get("x-generation-id"), body.id)
    assert.deepStrictEqual(body.data, texts.map((text, index) => ({ object: "embedding", embedding: vector(text), index })))
    assert.deepStrictEqual(body.usage, {
      prompt_tokens: 6,
      total_tokens: 6,
      cost: costOf(6, "0.1"),
      cost_details: {
        upstream_inference_prompt_cost: costOf(6, "0.1"),
        upstream_inference_completions_cost: 0,
        upstream_inference_cost: costOf(6, "0.1")
      },
      is_byok: false
    })
  })

  it("puts an upstream's out-of-order answer back in input order", async () => {
    const texts = ["a", "b", "c"]
    alpha.setBehaviour([okBody([2, 0, 1].map((index) => ({ index, embedding: vector(texts[index]!) })))])
    const reply = await gateway.embed({ model: "acme/embed", input: texts, provider: only("alpha") })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(reply.json.data.map((d: any) => d.index), [0, 1, 2])
    assert.deepStrictEqual(reply.json.data.map((d: any) => d.embedding), texts.map((t) => vector(t)))
  })

  it("reports prompt_tokens_details only for two or more modalities the upstream counted, and prices images", async () => {
    const mixed = await gateway.embed({
      model: "acme/embed",
      input: [{ content: [{ type: "text", text: "a red square" }, { type: "image_url", image_url: { url: png } }] }],
      provider: only("alpha")
    })
    assert.strictEqual(mixed.status, 200, mixed.text)
    assert.deepStrictEqual(mixed.json.usage.prompt_tokens_details, { text_tokens: 3, image_tokens: 85 })
    assert.strictEqual(mixed.json.usage.prompt_tokens, 88)
    assert.strictEqual(mixed.json.usage.cost, 0.0001088)

    const imageOnly = await gateway.embed({
      model: "acme/embed",
      input: [{ content: [{ type: "image_url", image_url: { url: png } }] }],
      provider: only("alpha")
    })
    assert.strictEqual(imageOnly.status, 200, imageOnly.text)
    assert.notProperty(imageOnly.json.usage, "prompt_tokens_details")

    alpha.setBehaviour([okBody([{ index: 0, embedding: vector("x") }], { prompt_tokens: 88, total_tokens: 88 })])
    const unreported = await gateway.embed({
      model: "acme/embed",
      input: [{ content: [{ type: "text", text: "x" }, { type: "image_url", image_url: { url: png } }] }],
      provider: only("alpha")
    })
    assert.strictEqual(unreported.status, 200, unreported.text)
    assert.notProperty(unreported.json.usage, "prompt_tokens_details")

    const text = await gateway.embed({ model: "acme/embed", input: "plain", provider: only("alpha") })
    assert.notProperty(text.json.usage, "prompt_tokens_details")
  })

  it("base64 asks the upstream for base64 and forwards its bytes, refusing values that are not finite", async () => {
    const reply = await gateway.embed({ model: "acme/embed", input: ["one", "two"], encoding_format: "base64", provider: only("alpha") })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(lastBody(alpha).encoding_format, "base64")
    assert.deepStrictEqual(reply.json.data.map((d: any) => d.embedding), ["one", "two"].map((t) => FakeUpstream.float32Base64(vector(t))))
    assert.deepStrictEqual(decodeFloat32(reply.json.data[1].embedding), vector("two"))

    // NaN (here with payload bits) is not an embedding value, whatever the encoding.
    const raw = Buffer.alloc(64)
    for (let i = 0; i < 16; i++) raw.writeUInt32LE(0x7fa00001 + i, i * 4)
    alpha.setBehaviour([okBody([{ index: 0, embedding: raw.toString("base64") }])])
    const refused = await gateway.embed({ model: "acme/embed", input: "x", encoding_format: "base64", provider: only("alpha") })
    assert.strictEqual(refused.status, 502, refused.text)
    assert.strictEqual(refused.json.error.metadata.reason, "InvalidResponse")
  })

  it("forwards the upstream's vectors as it wrote them, and refuses a malformed number", async () => {
    const written = ["[ 1.5E-7, -0.0 ,2e+1,0.25,1,2,3,4,5,6,7,8,9,10,11,12 ]", "[0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,-1e-3]"]
    alpha.setBehaviour([{
      _tag: "Status",
      status: 200,
      body: `{"object":"list","data":[{"object":"embedding","index":1,"embedding":${written[1]}},{"object":"embedding","index":0,"embedding":${written[0]}}],"model":"embed","usage":{"prompt_tokens":3,"total_tokens":3}}`
    }])
    const reply = await gateway.embed({ model: "acme/embed", input: ["a", "b"], provider: only("alpha") })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.include(reply.text, `"embedding":${written[0]},"index":0}`)
    assert.include(reply.text, `"embedding":${written[1]},"index":1}`)
    assert.deepStrictEqual(reply.json.data[0].embedding.slice(0, 3), [1.5e-7, -0, 20])

    alpha.setBehaviour([{
      _tag: "Status",
      status: 200,
      body: `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[${"0.5,".repeat(15)}1e400]}],"model":"embed"}`
    }])
    const refused = await gateway.embed({ model: "acme/embed", input: "x", provider: only("alpha") })
    assert.strictEqual(refused.status, 502, refused.text)
    assert.strictEqual(refused.json.error.metadata.reason, "InvalidResponse")
  })

  it("base64 from an upstream that answers floats is little-endian float32", async () => {
    const reply = await gateway.embed({ model: "acme/coral", input: ["hello"], encoding_format: "base64" })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(lastBody(coral).embedding_types, ["float"])
    const expected = FakeUpstream.vectorFor("embed-english-light-v3.0|search_document|hello", 384)
    assert.strictEqual(reply.json.data[0].embedding, FakeUpstream.float32Base64(expected))
    assert.deepStrictEqual(decodeFloat32(reply.json.data[0].embedding), expected)
  })

  it("float is the default, also when the upstream answers base64", async () => {
    alpha.setBehaviour([okBody([{ index: 0, embedding: FakeUpstream.float32Base64(vector("x")) }])])
    const reply = await gateway.embed({ model: "acme/embed", input: "x", provider: only("alpha") })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.notProperty(lastBody(alpha), "encoding_format")
    assert.deepStrictEqual(reply.json.data[0].embedding, vector("x"))
  })

  it("dimensions is sent to an upstream that supports it, and the width it returns is checked", async () => {
    const honoured = await gateway.embed({ model: "acme/embed", input: "x", dimensions: 8, provider: only("alpha") })
    assert.strictEqual(honoured.status, 200, honoured.text)
    assert.strictEqual(lastBody(alpha).dimensions, 8)
    assert.strictEqual(honoured.json.data[0].embedding.length, 8)

    alpha.setBehaviour({ _tag: "WrongWidth", width: 12 })
    const caught = await gateway.embed({ model: "acme/embed", input: "x", dimensions: 8, provider: only("alpha") })
    assert.strictEqual(caught.status, 502, caught.text)
    assert.strictEqual(caught.json.error.code, 502)
    assert.strictEqual(caught.json.error.metadata.reason, "InvalidResponse")
    assert.include(caught.json.error.message, "expected vectors of 8 dimensions, got 12")

    const rescued = await gateway.embed({ model: "acme/embed", input: "x", dimensions: 8, provider: { order: ["alpha", "bravo"] } })
    assert.strictEqual(rescued.status, 200, rescued.text)
    assert.strictEqual(servedBy(rescued), "bravo")
    assert.strictEqual(rescued.json.data[0].embedding.length, 8)
    assert.strictEqual(rescued.json.usage.cost, costOf(1, "0.2"))
  })

  it("an endpoint without dimensions serves without it at its own width, which is checked; require_parameters excludes it", async () => {
    const served = await gateway.embed({ model: "acme/fixed", input: "x", dimensions: 8 })
    assert.strictEqual(served.status, 200, served.text)
    assert.notProperty(lastBody(bravo), "dimensions")
    assert.strictEqual(served.json.data[0].embedding.length, 16)
    assert.deepStrictEqual(served.json.switchyard.ignored_parameters, ["dimensions"])

    const before = bravo.requests.length
    const strict = await gateway.embed({ model: "acme/fixed", input: "x", dimensions: 8, provider: { require_parameters: true } })
    assert.strictEqual(strict.status, 404, strict.text)
    assert.strictEqual(strict.json.error.metadata.candidates[0].excluded_by, "require_parameters")
    assert.strictEqual(bravo.requests.length, before)

    bravo.setBehaviour({ _tag: "WrongWidth", width: 12 })
    const drifted = await gateway.embed({ model: "acme/fixed", input: "x", dimensions: 8 })
    assert.strictEqual(drifted.status, 502, drifted.text)
    assert.include(drifted.json.error.message, "expected vectors of 16 dimensions, got 12")
  })

  it("endpoints supporting every parameter sent are preferred; the others serve as fallbacks without the parameter", async () => {
    // bravo is 1000 times cheaper, so the draw would pick it almost always; it lacks dimensions.
    for (const seed of ["1", "2", "3"]) {
      const preferred = await gateway.embed({ model: "acme/mixed", input: "x", dimensions: 8 }, { headers: { "x-switchyard-seed": seed, "x-switchyard-explain": "true" } })
      assert.strictEqual(preferred.status, 200, preferred.text)
      assert.strictEqual(servedBy(preferred), "delta")
      assert.strictEqual(lastBody(delta).dimensions, 8)
      assert.strictEqual(preferred.json.data[0].embedding.length, 8)
      assert.notProperty(preferred.json.switchyard, "ignored_parameters")
      const bravoReport = preferred.json.switchyard.routing.candidates.find((c: { provider: string }) => c.provider === "bravo")
      assert.deepStrictEqual([bravoReport.status, bravoReport.rank, bravoReport.missing_parameters], ["attempt", 1, ["dimensions"]])
    }

    delta.setBehaviour({ _tag: "Status", status: 503 })
    const fallback = await gateway.embed({ model: "acme/mixed", input: "x", dimensions: 8 })
    assert.strictEqual(fallback.status, 200, fallback.text)
    assert.strictEqual(servedBy(fallback), "bravo")
    assert.notProperty(lastBody(bravo), "dimensions")
    assert.strictEqual(fallback.json.data[0].embedding.length, 16)
    assert.deepStrictEqual(
      [fallback.json.switchyard.vector_space_change.primary_dimensions, fallback.json.switchyard.vector_space_change.dimensions],
      [8, 16]
    )
  })

  it("token ids reach an OpenAI-compatible endpoint that lists no input_modalities", async () => {
    const reply = await gateway.embed({ model: "acme/embed", input: [[1, 2, 3], [4, 5]], provider: only("bravo") })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(lastBody(bravo).input, [[1, 2, 3], [4, 5]])
    assert.strictEqual(reply.json.data.length, 2)
    const single = await gateway.embed({ model: "acme/embed", input: [7, 8, 9], provider: only("bravo") })
    assert.strictEqual(single.status, 200, single.text)
    assert.deepStrictEqual(lastBody(bravo).input, [[7, 8, 9]])
  })

  it("text-only multimodal inputs go to a text-only endpoint as one string each, parts joined by a newline; media parts do not", async () => {
    const input = [{ content: [{ type: "text", text: "first part" }, { type: "text", text: "second part" }] }, { content: [{ type: "text", text: "alone" }] }]
    const reply = await gateway.embed({ model: "acme/embed", input, provider: only("bravo") })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(lastBody(bravo).input, ["first part\nsecond part", "alone"])
    assert.deepStrictEqual(reply.json.data.map((d: { embedding: unknown }) => d.embedding), [vector("first part\nsecond part"), vector("alone")])

    // alpha declares images: the objects reach it as they came.
    const declared = await gateway.embed({ model: "acme/embed", input, provider: only("alpha") })
    assert.strictEqual(declared.status, 200, declared.text)
    assert.deepStrictEqual(lastBody(alpha).input, input)

    const before = bravo.requests.length
    const image = await gateway.embed({ model: "acme/embed", input: [{ content: [{ type: "image_url", image_url: { url: png } }] }], provider: only("bravo") })
    assert.strictEqual(image.status, 404, image.text)
    assert.strictEqual(bravo.requests.length, before)
  })

  it("a non-integer token count from upstream is an invalid response, not a charge", async () => {
    alpha.setBehaviour([okBody([{ index: 0, embedding: vector("x") }], { prompt_tokens: 2.5, total_tokens: 2.5 })])
    const reply = await gateway.embed({ model: "acme/embed", input: "x", provider: only("alpha") })
    assert.strictEqual(reply.status, 502, reply.text)
    assert.strictEqual(reply.json.error.metadata.reason, "InvalidResponse")
  })
})

describe("a fresh install", () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("answers the local model with no provider credentials and no credits", async () => {
    const reply = await request(server, "/embeddings", { model: "switchyard/local-embed", input: ["hello world", "hello there"] }, { key: server.apiKey })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(servedBy(reply), "local")
    assert.strictEqual(reply.json.data.length, 2)
    assert.strictEqual(reply.json.data[0].embedding.length, 256)
    assert.strictEqual(reply.json.usage.cost, 0)
    assert.strictEqual(reply.json.usage.prompt_tokens, 4)

    const models = await request(server, "/embeddings/models", undefined, { key: server.apiKey })
    assert.deepStrictEqual(models.json.data.map((m: any) => m.id), ["switchyard/local-embed"])

    const keyless = await request(server, "/embeddings", { model: "openai/text-embedding-3-small", input: "x" }, { key: server.apiKey })
    assert.strictEqual(keyless.status, 404)
    assert.strictEqual(keyless.json.error.code, 404)
    assert.include(keyless.json.error.message, "credential")
  })
})
