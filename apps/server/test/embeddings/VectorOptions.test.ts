import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Matryoshka from "@switchyard/core/vectors/Matryoshka"
import * as Windows from "@switchyard/core/vectors/Windows"
import * as FakeBedrock from "../fakes/FakeBedrock.ts"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeTei from "../fakes/FakeTei.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVertex from "../fakes/FakeVertex.ts"
import * as FakeVoyage from "../fakes/FakeVoyage.ts"
import { type Gateway, startGateway } from "./Gateway.ts"

FakeBedrock.isolateCredentialChain()

// One model served by a provider of each wire format, each with a limit of 64 tokens. OpenAI's
// model: the gateway counts its tokens itself (cl100k_base); TEI counts through its /tokenize; the
// others are told not to cut and refuse in their own words.
const model = "openai/text-embedding-3-small"
const limit = 64
const quantized = ["int8", "uint8", "binary", "ubinary"]

const long = Array.from({ length: 150 }, (_, i) => `w${i}`).join(" ")
const short = "a short text"
const shape = /^input(\[\d+\])?: .+ \(truncate: "end" cuts it, "chunk" embeds it in pieces\)$/u

const norm = (v: ReadonlyArray<number>) => Math.sqrt(v.reduce((s, x) => s + x * x, 0))

describe("one request, one vector: widths, types and long inputs the same whichever provider serves", () => {
  let gateway: Gateway
  let openai: FakeUpstream.FakeServer
  let cohere: FakeUpstream.FakeServer
  let voyage: FakeUpstream.FakeServer
  let jina: FakeUpstream.FakeServer
  let tei: FakeUpstream.FakeServer
  let vertex: FakeVertex.FakeVertex
  let bedrock: FakeBedrock.FakeBedrock
  const slugs = ["openai", "cohere", "voyage", "jina", "tei", "vertex", "bedrock"] as const
  const savedMetadataHost = process.env.GCE_METADATA_HOST

  beforeAll(async () => {
    openai = await FakeOpenAi.start({ maxTokens: limit })
    cohere = await FakeCohere.start({ apiKey: "sk-fake", maxTokens: limit })
    voyage = await FakeVoyage.start({ apiKey: "sk-fake", maxTokens: limit })
    jina = await FakeOpenAi.start({ maxTokens: limit, defaultWidth: 1024 })
    tei = await FakeTei.start({ maxInputLength: limit })
    vertex = await FakeVertex.start({ defaultWidth: 768, maxTokens: limit })
    bedrock = await FakeBedrock.start({ maxTokens: limit })
    FakeBedrock.pointCredentialChainAt(bedrock)
    // The gateway runs in this process and google-auth-library reads the process's environment.
    process.env.GCE_METADATA_HOST = vertex.host
    const endpoint = (upstream: string, dimensions: number, facts: Record<string, unknown>) => ({
      model,
      upstream_model: upstream,
      pricing: { prompt: "0.02" },
      dimensions,
      max_batch_items: 96,
      max_input_tokens: limit,
      matryoshka: true,
      ...facts
    })
    const base = { data_collection: "deny" }
    gateway = await startGateway({
      credits: 10,
      config: {
        providers: [
          { ...base, slug: "openai", name: "OpenAI", adapter: "openai", dialect: "openai", base_url: openai.url, api_key_env: "OPENAI_API_KEY", endpoints: [endpoint("text-embedding-3-small", 1536, { supported_parameters: ["dimensions", "encoding_format", "user"] })] },
          { ...base, slug: "cohere", name: "Cohere", adapter: "cohere", base_url: cohere.url, api_key_env: "COHERE_API_KEY", endpoints: [endpoint("embed-v4.0", 1536, { supported_parameters: ["dimensions", "input_type"], output_dtypes: quantized })] },
          { ...base, slug: "voyage", name: "Voyage", adapter: "voyage", base_url: voyage.url, api_key_env: "VOYAGE_API_KEY", endpoints: [endpoint("voyage-3.5", 1024, { supported_parameters: ["dimensions", "input_type", "encoding_format"], output_dtypes: quantized })] },
          { ...base, slug: "jina", name: "Jina", adapter: "jina", base_url: jina.url, api_key_env: "JINA_API_KEY", endpoints: [endpoint("jina-embeddings-v3", 1024, { supported_parameters: ["dimensions", "input_type", "encoding_format"], output_dtypes: ["binary", "ubinary"], input_modalities: ["text"] })] },
          { ...base, slug: "tei", name: "TEI", adapter: "tei", base_url: tei.url, api_key_env: null, endpoints: [endpoint("BAAI/bge-small-en-v1.5", 384, {})] },
          { ...base, slug: "vertex", name: "Vertex", adapter: "vertex", base_url: vertex.url, project: "fake-project", location: "us-central1", api_key_env: null, endpoints: [endpoint("text-embedding-005", 768, { supported_parameters: ["dimensions", "input_type"] })] },
          { ...base, slug: "bedrock", name: "Bedrock", adapter: "bedrock", region: "us-east-1", base_url: bedrock.url, endpoints: [endpoint("cohere.embed-english-v3", 1024, { supported_parameters: ["input_type"], output_dtypes: quantized })] }
        ],
        workspaces: { default: { cache: false } }
      },
      env: { GCE_METADATA_HOST: vertex.host, AWS_CONTAINER_CREDENTIALS_FULL_URI: bedrock.credentialsUrl }
    })
  }, 120_000)

  afterAll(async () => {
    await gateway?.close()
    await Promise.all([openai, cohere, voyage, jina, tei, vertex, bedrock].map((fake) => fake?.close()))
    if (savedMetadataHost === undefined) delete process.env.GCE_METADATA_HOST
    else process.env.GCE_METADATA_HOST = savedMetadataHost
  })

  const at = (slug: string, body: Record<string, unknown>) => gateway.embed({ model, ...body, provider: { only: [slug] } })
  const vectorOf = async (generation: string) => (await gateway.call(`/generation?id=${generation}`)).json.data.vector

  it("dimensions on a Matryoshka model: the width asked from every provider, natively or cut by the gateway, of norm 1", async () => {
    const native = new Set(["openai", "cohere", "voyage", "jina", "vertex"])
    for (const slug of slugs) {
      const reply = await at(slug, { input: [short, "another"], dimensions: 256 })
      assert.strictEqual(reply.status, 200, `${slug}: ${reply.text}`)
      for (const d of reply.json.data) {
        assert.strictEqual(d.embedding.length, 256, slug)
        assert.approximately(norm(d.embedding), native.has(slug) ? norm(d.embedding) : 1, 1e-6, slug)
      }
      assert.notProperty(reply.json.switchyard ?? {}, "ignored_parameters", slug)
      const facts = await vectorOf(reply.json.id)
      assert.deepInclude(facts, { dimensions: 256, dimensions_by: native.has(slug) ? "provider" : "gateway" }, slug)
    }
    // The gateway's cut is the provider's full vector, first 256 numbers re-normalised.
    const cut = await at("tei", { input: short, dimensions: 256 })
    const expected = Matryoshka.cut(FakeUpstream.vectorFor(short, 384), 256)
    cut.json.data[0].embedding.forEach((x: number, i: number) => {
      assert.approximately(x, expected[i]!, 1e-6)
    })
  }, 120_000)

  it("output_dtype: the same type and length from every provider, made by the provider where it can", async () => {
    const makes = new Set(["cohere", "voyage", "jina"])
    for (const dtype of ["binary", "int8"] as const) {
      for (const slug of slugs) {
        const reply = await at(slug, { input: [short], dimensions: 256, output_dtype: dtype })
        assert.strictEqual(reply.status, 200, `${slug}: ${reply.text}`)
        const values: Array<number> = reply.json.data[0].embedding
        assert.strictEqual(values.length, dtype === "binary" ? 32 : 256, `${slug} ${dtype}`)
        assert.isTrue(values.every((v) => Number.isInteger(v) && v >= -128 && v <= 127), `${slug} ${dtype}`)
        const nativeHere = makes.has(slug) && !(dtype === "int8" && slug === "jina")
        assert.deepInclude(await vectorOf(reply.json.id), { dtype, dtype_by: nativeHere ? "provider" : "gateway" }, `${slug} ${dtype}`)
      }
    }
    // The gateway's bits are the reference packing of the cut floats; base64 is those packed bits.
    const floats = Matryoshka.cut(FakeUpstream.vectorFor(short, 384), 256)
    const bits = await at("tei", { input: short, dimensions: 256, output_dtype: "ubinary" })
    assert.deepStrictEqual(bits.json.data[0].embedding, FakeUpstream.packed(Array.from(floats), false))
    const raw = await at("tei", { input: short, dimensions: 256, output_dtype: "binary", encoding_format: "base64" })
    assert.deepStrictEqual([...Buffer.from(raw.json.data[0].embedding, "base64")], FakeUpstream.packed(Array.from(floats), false))
  }, 120_000)

  it("truncate none: a long input is the same 400 from every provider, and the gateway calls no upstream where it counts", async () => {
    for (const slug of slugs) {
      const before = { openai: openai.requests.length, tei: tei.requests.filter((r) => r.path === "/embed").length }
      const reply = await at(slug, { input: [short, long], dimensions: 256 })
      assert.strictEqual(reply.status, 400, `${slug}: ${reply.text}`)
      assert.match(reply.json.error.message, shape, slug)
      assert.include(reply.json.error.message, model, slug)
      assert.strictEqual(reply.json.error.metadata.field, "input", slug)
      assert.strictEqual(reply.json.error.metadata.max_input_tokens, limit, slug)
      if (slug === "openai") {
        assert.strictEqual(openai.requests.length, before.openai)
        assert.match(reply.json.error.message, /^input\[1\]: \d+ tokens; openai\/text-embedding-3-small takes at most 64 /u)
      }
      if (slug === "tei") {
        assert.strictEqual(tei.requests.filter((r) => r.path === "/embed").length, before.tei)
        assert.include(reply.json.error.message, "input[1]: 152 tokens")
      }
    }
  }, 120_000)

  it("truncate start, end and chunk: one vector per input of the width asked from every provider", async () => {
    for (const truncate of ["start", "end", "chunk"] as const) {
      for (const slug of slugs) {
        const reply = await at(slug, { input: [short, long], dimensions: 256, truncate })
        assert.strictEqual(reply.status, 200, `${slug} ${truncate}: ${reply.text}`)
        assert.deepStrictEqual(reply.json.data.map((d: { embedding: Array<number> }) => d.embedding.length), [256, 256], `${slug} ${truncate}`)
        assert.isAbove(reply.json.usage.prompt_tokens, 3, `${slug} ${truncate}`)
      }
    }
  }, 240_000)

  it("chunk: the answer is the token-weighted mean of its windows' vectors, re-normalised; usage counts every window", async () => {
    const reply = await at("tei", { input: long, dimensions: 256, truncate: "chunk" })
    assert.strictEqual(reply.status, 200, reply.text)
    // 150 words under 64 tokens, two of them [CLS] and [SEP]: three windows of 50 words.
    const words = long.split(" ")
    const windows = Windows.split(150, limit - 2).map((w) => words.slice(w.start, w.end).join(" "))
    assert.strictEqual(windows.length, 3)
    const sent = tei.requests.filter((r) => r.path === "/embed").at(-1)!.body as { inputs: Array<string> }
    assert.deepStrictEqual(sent.inputs, windows)
    const expected = Windows.weightedMean(windows.map((w) => Matryoshka.cut(FakeUpstream.vectorFor(w, 384), 256)), [50, 50, 50])
    reply.json.data[0].embedding.forEach((x: number, i: number) => {
      assert.approximately(x, expected[i]!, 1e-6)
    })
    assert.approximately(norm(reply.json.data[0].embedding), 1, 1e-6)
    assert.strictEqual(reply.json.usage.prompt_tokens, 3 * 52)
  }, 60_000)

  it("a width the Matryoshka model does not allow is a 400 naming its widths", async () => {
    const reply = await gateway.embed({ model, input: short, dimensions: 4096 })
    assert.strictEqual(reply.status, 400, reply.text)
    assert.include(reply.json.error.message, "1 to 384")
    assert.strictEqual(reply.json.error.metadata.field, "dimensions")
  })

  it("the model listing and the endpoints list say the limit, the widths and the types each provider makes", async () => {
    const listed = (await gateway.call("/embeddings/models")).json.data.find((m: { id: string }) => m.id === model)
    assert.deepInclude(listed, { max_input_tokens: limit, dimensions: 1536, matryoshka: true, output_dtypes: ["float", ...quantized] })
    const endpoints = (await gateway.call(`/models/${model}/endpoints`)).json.data.endpoints as Array<Record<string, unknown>>
    const of = (slug: string) => endpoints.find((e) => e.provider === slug)!
    assert.deepInclude(of("cohere"), { max_input_tokens: limit, matryoshka: true, output_dtypes: ["float", ...quantized], truncation: ["start", "end"] })
    assert.deepInclude(of("openai"), { output_dtypes: ["float"], truncation: [] })
    assert.deepInclude(of("jina"), { output_dtypes: ["float", "binary", "ubinary"], truncation: ["end"] })
  })

  it("the OpenAPI document names the fields and Cohere's embed routes", async () => {
    const doc = (await gateway.call("/openapi.json")).json
    const request = doc.components.schemas.EmbeddingRequest.properties
    assert.deepStrictEqual(request.output_dtype.enum, ["float", "int8", "uint8", "binary", "ubinary"])
    assert.deepStrictEqual(request.truncate.enum, ["none", "start", "end", "chunk"])
    assert.property(doc.paths, "/api/v2/embed")
    assert.property(doc.paths, "/api/v1/embed")
  })
})
