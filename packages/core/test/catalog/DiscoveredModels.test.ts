import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Catalog from "../../src/catalog/Catalog.ts"
import * as DiscoveredModels from "../../src/catalog/DiscoveredModels.ts"

const provider = (fields: Record<string, unknown>) =>
  Catalog.decode({
    providers: [{ slug: "gpu-tei", name: "GPU TEI", adapter: "tei", base_url: "http://tei:80", data_collection: "deny", discover: true, ...fields }]
  }).pipe(Effect.map((c) => c.providers[0]!))

const messages = (fields: Record<string, unknown>) =>
  provider(fields).pipe(Effect.flip, Effect.map((e) => e.issues.map((i) => `${i.path}: ${i.message}`).join("\n")))

describe("discovered models", () => {
  it.effect("a discovering provider needs no endpoints; its fields belong to self-hosted adapters and to discovery", () =>
    Effect.gen(function*() {
      const p = yield* provider({ discover_interval_s: 30, models: { "BAAI/bge-large-en-v1.5": "baai/bge-large" }, default_pricing: { prompt: "0.01" } })
      assert.deepStrictEqual(p.endpoints, [])
      assert.strictEqual(p.discover_interval_s, 30)
      assert.include(yield* messages({ discover: false, discover_interval_s: 30 }), `set "discover": true`)
      assert.include(yield* messages({ discover_interval_s: 0 }), "discover_interval_s")
      assert.include(yield* messages({ models: { x: "no-slash" } }), "<vendor>/<model_name>")
      const cloud = yield* Catalog.decode({
        providers: [{ slug: "o", name: "O", adapter: "openai", base_url: "http://o:1/v1", data_collection: "deny", discover: true }]
      }).pipe(Effect.flip)
      assert.include(cloud.issues.map((i) => i.message).join("\n"), "discover belongs to a self-hosted adapter")
    }))

  it.effect("serves each listed model as <slug>/<server id> or its mapped id, at the default price, hand-listed endpoints first", () =>
    Effect.gen(function*() {
      const p = yield* provider({
        models: { "BAAI/bge-large-en-v1.5": "baai/bge-large" },
        default_pricing: { prompt: "0.01" },
        endpoints: [{ model: "gpu-tei/by-hand", upstream_model: "by-hand", pricing: { prompt: "1" }, dimensions: 8, max_batch_items: 4 }]
      })
      const { endpoints, skipped } = DiscoveredModels.endpointsOf(p, [
        { id: "BAAI/bge-large-en-v1.5", task: "embeddings", dimensions: 1024, max_batch_items: 64, max_input_tokens: 512 },
        { id: "BAAI/bge-reranker-base", task: "rerank" },
        { id: "by-hand", task: "embeddings", dimensions: 16 },
        { id: "not-probed-yet", task: "embeddings" },
        { id: "has space", task: "embeddings", dimensions: 4 }
      ])
      assert.deepStrictEqual(endpoints.map((e) => [e.model, e.upstream_model, e.task, e.dimensions, e.max_batch_items, e.pricing.prompt]), [
        ["baai/bge-large", "BAAI/bge-large-en-v1.5", "embeddings", 1024, 64, "0.01"],
        ["gpu-tei/BAAI/bge-reranker-base", "BAAI/bge-reranker-base", "rerank", undefined, undefined, "0.01"]
      ])
      assert.strictEqual(endpoints[0]!.max_input_tokens, 512)
      assert.deepStrictEqual(skipped, ["has space"])
      const merged = DiscoveredModels.withDiscovered(p, [{ id: "m", task: "embeddings", dimensions: 8 }])
      assert.deepStrictEqual(merged.endpoints.map((e) => [e.model, e.max_batch_items, e.pricing.prompt]), [
        ["gpu-tei/by-hand", 4, "1"],
        ["gpu-tei/m", DiscoveredModels.defaultMaxBatchItems, "0.01"]
      ])
    }))

  it.effect("a server's nomic-embed-text-v1.5 is Matryoshka, at the widths its own width allows", () =>
    Effect.gen(function*() {
      const p = yield* provider({})
      const { endpoints } = DiscoveredModels.endpointsOf(p, [
        { id: "nomic-ai/nomic-embed-text-v1.5", task: "embeddings", dimensions: 768 },
        { id: "nomic-embed-text:v1.5", task: "embeddings", dimensions: 512 },
        { id: "BAAI/bge-small-en-v1.5", task: "embeddings", dimensions: 384 }
      ])
      assert.deepStrictEqual(endpoints.map((e) => e.matryoshka), [[64, 128, 256, 512, 768], [64, 128, 256, 512], undefined])
    }))
})
