import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { load, readFile } from "../../src/catalog/CatalogLoader.ts"

const provider = {
  slug: "acme",
  name: "Acme",
  adapter: "openai",
  base_url: "http://127.0.0.1:9/v1",
  api_key_env: "ACME_API_KEY",
  data_collection: "deny",
  zdr: true,
  endpoints: [{
    model: "acme/embed-small",
    upstream_model: "embed-small",
    pricing: { prompt: "0.02", request: "0", image: "0", audio: "0" },
    quantization: "fp32",
    dimensions: 8,
    supported_parameters: ["dimensions"],
    max_batch_items: 16
  }]
}

const yamlText = `providers:
  - slug: acme
    name: Acme
    adapter: openai
    base_url: http://127.0.0.1:9/v1
    api_key_env: ACME_API_KEY
    data_collection: deny
    zdr: true
    endpoints:
      - model: acme/embed-small
        upstream_model: embed-small
        pricing: { prompt: "0.02", request: "0", image: "0", audio: "0" }
        quantization: fp32
        dimensions: 8
        supported_parameters: [dimensions]
        max_batch_items: 16
`

const withFile = <A>(name: string, text: string, use: (path: string) => Effect.Effect<A, unknown>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-catalog-"))
      const path = NodePath.join(dir, name)
      Fs.writeFileSync(path, text)
      return path
    }),
    use,
    (path) => Effect.sync(() => Fs.rmSync(NodePath.dirname(path), { recursive: true, force: true }))
  )

describe("config file", () => {
  it.effect("a JSON file and the same catalog in YAML read the same", () =>
    Effect.gen(function*() {
      const fromJson = yield* withFile("switchyard.json", JSON.stringify({ providers: [provider] }), readFile)
      const fromYaml = yield* withFile("switchyard.yaml", yamlText, readFile)
      assert.deepStrictEqual(fromYaml, fromJson)
      assert.strictEqual(fromYaml.providers[0]?.slug, "acme")
    }))

  it.effect("a malformed YAML or JSON file is a CatalogLoadError naming the file", () =>
    Effect.gen(function*() {
      for (const [name, text] of [["bad.yaml", "providers: [\n  - slug: acme\n  slug: twice"], ["bad.json", "{\"providers\": ["]] as const) {
        const error = yield* withFile(name, text, (path) => Effect.flip(readFile(path)))
        assert.strictEqual(error._tag, "CatalogLoadError")
        assert.include(error.message, name)
        assert.include(error.message, "is not valid JSON or YAML")
      }
    }))
})

describe("the built-in cloud providers", () => {
  const loadWith = (env: Record<string, string>) =>
    load.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))

  it.effect("Azure OpenAI and Vertex AI serve once the environment names the resource and the project, and their credential is there", () =>
    Effect.gen(function*() {
      const bare = yield* loadWith({ AZURE_OPENAI_API_KEY: "k", GOOGLE_APPLICATION_CREDENTIALS: "/sa.json" })
      assert.isFalse(bare.active.has("azure"), "no resource named")
      assert.isFalse(bare.active.has("google-vertex"), "no project named")
      const placed = yield* loadWith({
        AZURE_OPENAI_ENDPOINT: "https://myres.openai.azure.com",
        AZURE_OPENAI_API_KEY: "k",
        GOOGLE_CLOUD_PROJECT: "my-proj",
        GOOGLE_APPLICATION_CREDENTIALS: "/sa.json"
      })
      assert.isTrue(placed.active.has("azure"))
      assert.isTrue(placed.active.has("google-vertex"))
      assert.strictEqual(placed.catalog.providers.find((p) => p.slug === "azure")?.base_url, "https://myres.openai.azure.com")
      assert.strictEqual(placed.catalog.providers.find((p) => p.slug === "google-vertex")?.project, "my-proj")
      const keyless = yield* loadWith({ AZURE_OPENAI_ENDPOINT: "https://myres.openai.azure.com", GOOGLE_CLOUD_PROJECT: "my-proj" })
      assert.isFalse(keyless.active.has("azure"))
      assert.isFalse(keyless.active.has("google-vertex"))
    }))
})

describe("a provider batch's bucket", () => {
  const loadWith = (env: Record<string, string>) =>
    load.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
  const priced = { ...provider.endpoints[0], pricing: { prompt: "0.1", batch: { prompt: "0.05" } } }
  const bedrock = { ...provider, slug: "bedrock", adapter: "bedrock", region: "us-east-1", base_url: undefined, api_key_env: undefined, endpoints: [priced] }
  const vertex = { ...provider, slug: "vertex", adapter: "vertex", project: "p", location: "us-central1", base_url: undefined, api_key_env: undefined, endpoints: [priced] }

  it.effect("a config file with a Bedrock batch but no role ARN, or a Vertex one with no bucket, is refused at start naming the field", () =>
    Effect.gen(function*() {
      const cases = [
        [{ ...bedrock, batch: { s3_uri: "s3://bucket/batches/" } }, "providers[0].batch.role_arn"],
        [{ ...bedrock, batch: { role_arn: "arn:aws:iam::123456789012:role/BedrockBatchRole" } }, "providers[0].batch.s3_uri"],
        [vertex, "providers[0].batch.gcs_uri"]
      ] as const
      for (const [entry, field] of cases) {
        const error = yield* withFile("switchyard.json", JSON.stringify({ providers: [entry] }), (path) =>
          Effect.flip(loadWith({ SWITCHYARD_CONFIG: path })))
        assert.strictEqual(error._tag, "CatalogLoadError")
        assert.include(error.message, field)
      }
    }))

  it.effect("the built-in Bedrock provider's batch prices hold once the environment names its bucket and role; a malformed bucket is refused at start", () =>
    Effect.gen(function*() {
      const placed = yield* loadWith({
        SWITCHYARD_BEDROCK_BATCH_S3_URI: "s3://bucket/batches/",
        SWITCHYARD_BEDROCK_BATCH_ROLE_ARN: "arn:aws:iam::123456789012:role/BedrockBatchRole"
      })
      const titan = placed.catalog.providers.find((p) => p.slug === "amazon-bedrock")!.endpoints.find((e) => e.model === "amazon/titan-embed-text-v2")!
      assert.strictEqual(titan.pricing.batch?.prompt, "0.01")
      const error = yield* Effect.flip(loadWith({
        SWITCHYARD_BEDROCK_BATCH_S3_URI: "bucket/batches",
        SWITCHYARD_BEDROCK_BATCH_ROLE_ARN: "arn:aws:iam::123456789012:role/BedrockBatchRole"
      }))
      assert.include(error.message, "amazon-bedrock")
      assert.include(error.message, "s3_uri")
    }))
})
