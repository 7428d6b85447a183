import { assert, describe, it } from "@effect/vitest"
import { ModelsListResponse$inboundSchema } from "@openrouter/sdk/models"
import { Effect } from "effect"
import * as BuiltinCatalog from "../../src/catalog/BuiltinCatalog.ts"
import * as Catalog from "../../src/catalog/Catalog.ts"
import * as ModelListing from "../../src/catalog/ModelListing.ts"

const productExample = {
  providers: [{
    slug: "alpha",
    name: "Alpha Cloud",
    adapter: "openai",
    base_url: "http://127.0.0.1:18080/v1",
    api_key_env: "ALPHA_API_KEY",
    data_collection: "deny",
    zdr: true,
    endpoints: [{
      model: "openai/text-embedding-3-small",
      upstream_model: "text-embedding-3-small",
      pricing: { prompt: "0.02", request: "0", image: "0", audio: "0" },
      quantization: "fp16",
      dimensions: 1536,
      supported_parameters: ["dimensions", "encoding_format", "input_type", "user"],
      max_batch_items: 2048,
      distillable: true
    }]
  }],
  workspaces: { default: { only: null, ignore: [], data_collection: "allow", zdr: false } }
}

const withEndpoint = (patch: Record<string, unknown>) => ({
  providers: [{ ...productExample.providers[0], endpoints: [{ ...productExample.providers[0]!.endpoints[0], ...patch }] }]
})

const issuePaths = (file: unknown) =>
  Catalog.decode(file).pipe(
    Effect.flip,
    Effect.map((e) => e.issues.map((i) => i.path))
  )

describe("Catalog.decode", () => {
  it.effect("decodes the product's example and fills defaults", () =>
    Effect.gen(function*() {
      const catalog = yield* Catalog.decode(productExample)
      const [provider] = catalog.providers
      assert.strictEqual(provider?.slug, "alpha")
      assert.strictEqual(provider?.enabled, true)
      assert.deepStrictEqual(provider?.endpoints[0]?.pricing, {
        prompt: "0.02",
        search: "0",
        completion: "0",
        request: "0",
        image: "0",
        audio: "0"
      })
      assert.strictEqual(provider?.endpoints[0]?.variant, "default")
      assert.strictEqual(provider?.endpoints[0]?.input_modalities, undefined)
      assert.deepStrictEqual(Catalog.inputModalitiesOf(provider!, provider!.endpoints[0]!), ["text", "tokens"])
      assert.deepStrictEqual(Catalog.inputModalitiesOf({ ...provider!, adapter: "cohere" }, provider!.endpoints[0]!), ["text"])
      assert.deepStrictEqual(
        Catalog.inputModalitiesOf(provider!, { ...provider!.endpoints[0]!, input_modalities: ["text"] }),
        ["text"]
      )
      const minimal = yield* Catalog.decode({})
      assert.deepStrictEqual(minimal, { providers: [], workspaces: {}, broadcast: [] })
    }))

  it.effect("names the path of every bad field", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* issuePaths(withEndpoint({ pricing: { prompt: "cheap" } })), [
        "providers[0].endpoints[0].pricing.prompt"
      ])
      assert.deepStrictEqual(yield* issuePaths(withEndpoint({ dimensions: 0, quantization: "fp9" })).pipe(Effect.map((p) => p.sort())), [
        "providers[0].endpoints[0].dimensions",
        "providers[0].endpoints[0].quantization"
      ])
      assert.deepStrictEqual(yield* issuePaths(withEndpoint({ pricing: { prompt: "0.1234567890123" } })), [
        "providers[0].endpoints[0].pricing.prompt"
      ])
      assert.deepStrictEqual(yield* issuePaths({ providers: [{ ...productExample.providers[0], adapter: "grpc" }] }), [
        "providers[0].adapter"
      ])
      assert.deepStrictEqual(yield* issuePaths({ workspaces: { default: { zdr: "yes" } } }), ["workspaces.default.zdr"])
    }))

  it.effect("takes a batch price on an embeddings endpoint of a provider with a batch API, each absent field at the live price", () =>
    Effect.gen(function*() {
      const p = productExample.providers[0]!
      const priced = { ...p.endpoints[0], pricing: { prompt: "0.02", request: "0.001", batch: { prompt: "0.01" } } }
      const catalog = yield* Catalog.decode({ providers: [{ ...p, dialect: "openai", endpoints: [priced] }] })
      const provider = catalog.providers[0]!
      const endpoint = provider.endpoints[0]!
      assert.strictEqual(Catalog.batchApiOf(provider), "openai")
      const batch = Catalog.batchPricingOf(endpoint.pricing)
      assert.deepStrictEqual(batch, { prompt: "0.01", search: "0", completion: "0", request: "0.001", image: "0", audio: "0" })
      assert.strictEqual(Catalog.batchPricingOf(endpoint.pricing), batch, "one object per pricing")
      const { batch: _, ...livePrice } = endpoint.pricing
      assert.strictEqual(Catalog.batchPricingOf(livePrice), undefined)
      // No batch API (the generic dialect), or not in the price's format: refused with its path.
      assert.deepStrictEqual(yield* issuePaths({ providers: [{ ...p, endpoints: [priced] }] }), [
        "providers[0].endpoints[0].pricing.batch"
      ])
      assert.deepStrictEqual(
        yield* issuePaths({ providers: [{ ...p, dialect: "openai", endpoints: [{ ...priced, pricing: { batch: { prompt: "half" } } }] }] }),
        ["providers[0].endpoints[0].pricing.batch.prompt"]
      )
    }))

  it.effect("knows the batch APIs of Mistral, Voyage, Gemini, Bedrock and Vertex; Bedrock's and Vertex's need their bucket (and role), each missing field named", () =>
    Effect.gen(function*() {
      const p = productExample.providers[0]!
      const priced = { ...p.endpoints[0], pricing: { prompt: "0.1", batch: { prompt: "0.05" } } }
      const apis = [
        [{ adapter: "openai", dialect: "mistral" }, "mistral"],
        [{ adapter: "voyage" }, "voyage"],
        [{ adapter: "gemini" }, "gemini"],
        [{ adapter: "bedrock", region: "us-east-1" }, "bedrock"],
        [{ adapter: "vertex", project: "p", location: "us-central1" }, "vertex"],
        [{ adapter: "cohere" }, undefined],
        [{ adapter: "openai", dialect: "together" }, undefined]
      ] as const
      for (const [fields, api] of apis) assert.strictEqual(Catalog.batchApiOf(fields), api, JSON.stringify(fields))
      const bedrock = { ...p, adapter: "bedrock", region: "us-east-1", endpoints: [priced] }
      const role = "arn:aws:iam::123456789012:role/BedrockBatchRole"
      assert.deepStrictEqual(yield* issuePaths({ providers: [bedrock] }), ["providers[0].batch.s3_uri", "providers[0].batch.role_arn"])
      const withoutRole = yield* Effect.flip(Catalog.decode({ providers: [{ ...bedrock, batch: { s3_uri: "s3://bucket/prefix/" } }] }))
      assert.deepStrictEqual(withoutRole.issues.map((i) => i.path), ["providers[0].batch.role_arn"])
      assert.include(withoutRole.message, "needs batch.role_arn")
      yield* Catalog.decode({ providers: [{ ...bedrock, batch: { s3_uri: "s3://bucket/prefix/", role_arn: role } }] })
      assert.deepStrictEqual(
        yield* issuePaths({ providers: [{ ...bedrock, batch: { s3_uri: "bucket/prefix", role_arn: role } }] }),
        ["providers[0].batch.s3_uri"]
      )
      const vertex = { ...p, adapter: "vertex", project: "p", location: "us-central1", endpoints: [priced] }
      assert.deepStrictEqual(yield* issuePaths({ providers: [vertex] }), ["providers[0].batch.gcs_uri"])
      yield* Catalog.decode({ providers: [{ ...vertex, batch: { gcs_uri: "gs://bucket/prefix/" } }] })
      assert.deepStrictEqual(
        yield* issuePaths({ providers: [{ ...vertex, batch: { gcs_uri: "gs://bucket/prefix/", role_arn: role } }] }),
        ["providers[0].batch.role_arn"]
      )
      // A bucket belongs to the clouds whose batch jobs read one.
      assert.deepStrictEqual(yield* issuePaths({ providers: [{ ...p, dialect: "openai", batch: { gcs_uri: "gs://bucket/" } }] }), ["providers[0].batch"])
    }))

  it.effect("refuses unknown properties", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* issuePaths(withEndpoint({ price: "1" })), ["providers[0].endpoints[0].price"])
      assert.deepStrictEqual(yield* issuePaths({ ...productExample, provider: [] }), ["provider"])
      const error = yield* Effect.flip(Catalog.decode(withEndpoint({ price: "1" })))
      assert.include(error.message, "providers[0].endpoints[0].price")
    }))

  it.effect("refuses duplicates and a missing base_url", () =>
    Effect.gen(function*() {
      const p = productExample.providers[0]!
      assert.deepStrictEqual(yield* issuePaths({ providers: [p, p] }), ["providers[1].slug"])
      assert.deepStrictEqual(yield* issuePaths({ providers: [{ ...p, endpoints: [p.endpoints[0], p.endpoints[0]] }] }), [
        "providers[0].endpoints[1]"
      ])
      const { base_url: _, ...noUrl } = p
      assert.deepStrictEqual(yield* issuePaths({ providers: [noUrl] }), ["providers[0].base_url"])
      yield* Catalog.decode({ providers: [{ ...noUrl, adapter: "local", api_key_env: null }] })
    }))
})

describe("Catalog.merge", () => {
  it.effect("overrides built-in providers by slug and appends new ones", () =>
    Effect.gen(function*() {
      const file = yield* Catalog.decode({
        providers: [
          { ...productExample.providers[0], slug: "openai", name: "My OpenAI proxy" },
          productExample.providers[0],
          { slug: "voyage", name: "Voyage", adapter: "voyage", base_url: "https://x.example/v1", data_collection: "allow", enabled: false, endpoints: [] }
        ],
        workspaces: { default: { only: ["alpha"] }, team: { data_collection: "deny" } }
      })
      const merged = Catalog.merge(BuiltinCatalog.builtin, file)
      const slugs = merged.providers.map((p) => p.slug)
      assert.deepStrictEqual(slugs, [...BuiltinCatalog.builtin.providers.map((p) => p.slug), "alpha"])
      assert.strictEqual(merged.providers.find((p) => p.slug === "openai")?.name, "My OpenAI proxy")
      assert.isFalse(Catalog.isActive(merged.providers.find((p) => p.slug === "voyage")!, { VOYAGE_API_KEY: "k" }))
      assert.deepStrictEqual(Catalog.workspace(merged, "default").only, ["alpha"])
      assert.strictEqual(Catalog.workspace(merged, "team").data_collection, "deny")
      assert.deepStrictEqual(Catalog.workspace(merged, "nobody"), Catalog.openWorkspace)
    }))
})

describe("Catalog.isActive", () => {
  it.effect("needs the credential variable set and non-empty", () =>
    Effect.gen(function*() {
      const [alpha] = (yield* Catalog.decode(productExample)).providers
      assert.isFalse(Catalog.isActive(alpha!, {}))
      assert.isFalse(Catalog.isActive(alpha!, { ALPHA_API_KEY: " " }))
      assert.isTrue(Catalog.isActive(alpha!, { ALPHA_API_KEY: "secret" }))
    }))
})

describe("BuiltinCatalog", () => {
  const keys = [
    "OPENAI_API_KEY",
    "COHERE_API_KEY",
    "VOYAGE_API_KEY",
    "MISTRAL_API_KEY",
    "GEMINI_API_KEY",
    "JINA_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "DEEPINFRA_API_KEY"
  ]

  it("serves the local model with no credentials at all", () => {
    const active = BuiltinCatalog.builtin.providers.filter((p) => Catalog.isActive(p, {}))
    assert.deepStrictEqual(active.map((p) => p.slug), ["local"])
    const [endpoint] = active[0]!.endpoints
    assert.strictEqual(endpoint?.model, BuiltinCatalog.localModel)
    assert.strictEqual(endpoint?.dimensions, BuiltinCatalog.localDimensions)
    assert.strictEqual(endpoint?.pricing.prompt, "0")
  })

  it("names a real https endpoint and one credential per remote provider", () => {
    // Bedrock's credential is the AWS chain's, its URL the region's (see below).
    // Azure's host and Vertex's project are the operator's (see the next tests).
    const remote = BuiltinCatalog.builtin.providers.filter((p) => !["local", "bedrock", "azure", "vertex"].includes(p.adapter))
    assert.deepStrictEqual(remote.map((p) => p.api_key_env).sort(), [...keys].sort())
    for (const p of remote) assert.match(p.base_url ?? "", /^https:\/\//, p.slug)
  })

  it("activates Amazon Bedrock only when the AWS credential chain is configured", () => {
    const bedrock = BuiltinCatalog.builtin.providers.find((p) => p.slug === "amazon-bedrock")!
    assert.strictEqual(bedrock.region, "us-east-1")
    assert.strictEqual(bedrock.data_collection, "deny")
    assert.isFalse(Catalog.isActive(bedrock, {}))
    assert.isFalse(Catalog.isActive(bedrock, { AWS_EC2_METADATA_DISABLED: "true", AWS_REGION: "us-east-1" }))
    assert.isTrue(Catalog.isActive(bedrock, { AWS_ACCESS_KEY_ID: "AKIAEXAMPLE" }))
    assert.isTrue(Catalog.isActive(bedrock, { AWS_CONTAINER_CREDENTIALS_FULL_URI: "http://127.0.0.1:1/creds" }))
    assert.isTrue(Catalog.isActive(bedrock, { AWS_EC2_METADATA_DISABLED: "false" }))
    // A Bedrock API key named by api_key_env decides instead.
    assert.isFalse(Catalog.isActive({ ...bedrock, api_key_env: "AWS_BEARER_TOKEN_BEDROCK" }, { AWS_ACCESS_KEY_ID: "AKIAEXAMPLE" }))
  })

  it("lists Azure OpenAI disabled until AZURE_OPENAI_ENDPOINT places it, then active with its key", () => {
    const azureOf = (catalog: Catalog.Catalog) => catalog.providers.find((p) => p.slug === "azure")!
    const unplaced = azureOf(BuiltinCatalog.builtin)
    assert.strictEqual(unplaced.data_collection, "deny")
    assert.isFalse(unplaced.enabled)
    assert.isFalse(Catalog.isActive(unplaced, { AZURE_OPENAI_API_KEY: "k" }))
    // Not an https URL: left disabled.
    assert.isFalse(azureOf(BuiltinCatalog.placed(BuiltinCatalog.builtin, { AZURE_OPENAI_ENDPOINT: "myres.openai.azure.com" })).enabled)
    const azure = azureOf(BuiltinCatalog.placed(BuiltinCatalog.builtin, {
      AZURE_OPENAI_ENDPOINT: "https://myres.openai.azure.com/",
      OPENAI_API_VERSION: "2025-01-01-preview"
    }))
    assert.strictEqual(azure.base_url, "https://myres.openai.azure.com")
    assert.strictEqual(azure.api_version, "2025-01-01-preview")
    assert.isFalse(Catalog.isActive(azure, {}))
    assert.isTrue(Catalog.isActive(azure, { AZURE_OPENAI_API_KEY: "k" }))
    assert.deepStrictEqual(Object.fromEntries(azure.endpoints.map((e) => [e.model, e.pricing.prompt])), {
      "openai/text-embedding-3-small": "0.02",
      "openai/text-embedding-3-large": "0.13",
      "openai/text-embedding-ada-002": "0.1"
    })
    // Azure OpenAI's Batch API is the gateway's to use where an endpoint has a batch price.
    assert.strictEqual(Catalog.batchApiOf(azure), "azure")
    // A config file's own `azure` is left as it is.
    const own = { ...azure, base_url: "https://other.openai.azure.com" }
    assert.strictEqual(
      azureOf(BuiltinCatalog.placed({ ...BuiltinCatalog.builtin, providers: [own] }, { AZURE_OPENAI_ENDPOINT: "https://x.openai.azure.com" })).base_url,
      "https://other.openai.azure.com"
    )
  })

  it("lists Google Vertex AI disabled until GOOGLE_CLOUD_PROJECT places it, then active with Application Default Credentials", () => {
    const vertexOf = (catalog: Catalog.Catalog) => catalog.providers.find((p) => p.slug === "google-vertex")!
    const unplaced = vertexOf(BuiltinCatalog.builtin)
    assert.strictEqual(unplaced.data_collection, "deny")
    assert.isFalse(Catalog.isActive(unplaced, { GOOGLE_APPLICATION_CREDENTIALS: "/sa.json" }))
    const vertex = vertexOf(BuiltinCatalog.placed(BuiltinCatalog.builtin, { GOOGLE_CLOUD_PROJECT: "my-proj", GOOGLE_CLOUD_LOCATION: "europe-west4" }))
    assert.strictEqual(vertex.project, "my-proj")
    assert.strictEqual(vertex.location, "europe-west4")
    assert.strictEqual(vertexOf(BuiltinCatalog.placed(BuiltinCatalog.builtin, { GOOGLE_CLOUD_PROJECT: "p" })).location, "us-central1")
    assert.isFalse(Catalog.isActive(vertex, {}))
    assert.isTrue(Catalog.isActive(vertex, { GOOGLE_APPLICATION_CREDENTIALS: "/sa.json" }))
    assert.isTrue(Catalog.isActive(vertex, { GCE_METADATA_HOST: "127.0.0.1:1" }))
    const tasks = Object.fromEntries(vertex.endpoints.map((e) => [e.model, e.task]))
    assert.strictEqual(tasks["google/text-embedding-005"], "embeddings")
    assert.strictEqual(tasks["google/semantic-ranker-default-004"], "rerank")
  })

  it.effect("asks a bedrock provider for its region, not a base_url", () =>
    Effect.gen(function*() {
      const bedrock = { slug: "b", name: "B", adapter: "bedrock", data_collection: "deny", endpoints: [] }
      const error = yield* Effect.flip(Catalog.decode({ providers: [bedrock] }))
      assert.include(error.message, "a provider with adapter bedrock needs a region")
      assert.notInclude(error.message, "base_url")
      yield* Catalog.decode({ providers: [{ ...bedrock, region: "eu-central-1" }] })
    }))

  it("lists OpenAI at its list prices", () => {
    const openai = BuiltinCatalog.builtin.providers.find((p) => p.slug === "openai")!
    const prices = Object.fromEntries(openai.endpoints.map((e) => [e.model, e.pricing.prompt]))
    assert.deepStrictEqual(prices, {
      "openai/text-embedding-3-small": "0.02",
      "openai/text-embedding-3-large": "0.13",
      "openai/text-embedding-ada-002": "0.1"
    })
    // OpenAI's Batch API: half the live price.
    const batch = Object.fromEntries(openai.endpoints.map((e) => [e.model, Catalog.batchPricingOf(e.pricing)?.prompt]))
    assert.deepStrictEqual(batch, {
      "openai/text-embedding-3-small": "0.01",
      "openai/text-embedding-3-large": "0.065",
      "openai/text-embedding-ada-002": "0.05"
    })
    assert.strictEqual(Catalog.batchApiOf(openai), "openai")
  })

  it("carries the published batch prices of Gemini, Mistral and Voyage, and Bedrock's and Vertex's once the environment names their bucket", () => {
    const batchOf = (catalog: Catalog.Catalog, slug: string) =>
      Object.fromEntries(catalog.providers.find((p) => p.slug === slug)!.endpoints.flatMap((e) => {
        const price = Catalog.batchPricingOf(e.pricing)?.prompt
        return price === undefined ? [] : [[e.model, price]]
      }))
    const builtin = BuiltinCatalog.builtin
    assert.deepStrictEqual(batchOf(builtin, "google-ai-studio"), { "google/gemini-embedding-001": "0.075" })
    assert.deepStrictEqual(batchOf(builtin, "mistral"), { "mistralai/mistral-embed": "0.05" })
    assert.strictEqual(batchOf(builtin, "voyage")["voyage/voyage-3.5"], "0.0402")
    assert.deepStrictEqual(batchOf(BuiltinCatalog.placed(builtin, {}), "amazon-bedrock"), {})
    const placed = BuiltinCatalog.placed(builtin, {
      SWITCHYARD_BEDROCK_BATCH_S3_URI: "s3://bucket/batches/",
      SWITCHYARD_BEDROCK_BATCH_ROLE_ARN: "arn:aws:iam::123456789012:role/BedrockBatchRole",
      GOOGLE_CLOUD_PROJECT: "p",
      SWITCHYARD_VERTEX_BATCH_GCS_URI: "gs://bucket/batches/"
    })
    assert.deepStrictEqual(batchOf(placed, "amazon-bedrock"), {
      "amazon/titan-embed-text-v2": "0.01",
      "cohere/embed-english-v3.0": "0.05",
      "cohere/embed-multilingual-v3.0": "0.05"
    })
    assert.deepStrictEqual(placed.providers.find((p) => p.slug === "amazon-bedrock")!.batch, {
      s3_uri: "s3://bucket/batches/",
      role_arn: "arn:aws:iam::123456789012:role/BedrockBatchRole"
    })
    assert.deepStrictEqual(batchOf(placed, "google-vertex"), { "google/text-embedding-005": "0.08", "google/text-multilingual-embedding-002": "0.08" })
  })
})

describe("ModelListing", () => {
  it("lists the models of active providers in a shape the official SDK accepts", () => {
    const listing = ModelListing.list(BuiltinCatalog.builtin, { isActive: () => true })
    assert.isTrue(listing.total_count > 20)
    const parsed = ModelsListResponse$inboundSchema.safeParse(JSON.parse(JSON.stringify(listing)))
    assert.isTrue(parsed.success, parsed.success ? "" : parsed.error.message)
    const bge = listing.data.find((m) => m.id === "baai/bge-large-en-v1.5")!
    assert.strictEqual(bge.pricing.prompt, "0.00000001")
    assert.deepStrictEqual(bge.architecture.output_modalities, ["embeddings"])
  })

  it("lists only what active providers serve, one page at a time", () => {
    const none = ModelListing.list(BuiltinCatalog.builtin, { isActive: (p) => Catalog.isActive(p, {}) })
    assert.deepStrictEqual(none.data.map((m) => m.id), [BuiltinCatalog.localModel])
    const page = ModelListing.list(BuiltinCatalog.builtin, { isActive: () => true, limit: 5, offset: 5 })
    assert.strictEqual(page.data.length, 5)
    assert.strictEqual(page.links.next, `/api/v1/embeddings/models?offset=10&limit=5`)
    const last = ModelListing.list(BuiltinCatalog.builtin, { isActive: () => true, offset: page.total_count - 1 })
    assert.strictEqual(last.data.length, 1)
    assert.isNull(last.links.next)
  })
})
