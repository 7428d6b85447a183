import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Catalog from "../../src/catalog/Catalog.ts"

const tei = (fields: Record<string, unknown>) => ({
  providers: [{
    slug: "gpu-tei",
    name: "GPU TEI",
    adapter: "tei",
    data_collection: "deny",
    endpoints: [{ model: "baai/bge-small", upstream_model: "BAAI/bge-small-en-v1.5", pricing: { prompt: "0" }, dimensions: 384, max_batch_items: 32, distillable: false, quantization: "fp16", supported_parameters: [] }],
    ...fields
  }]
})

const messages = (file: unknown) =>
  Catalog.decode(file).pipe(Effect.flip, Effect.map((e) => e.issues.map((i) => `${i.path}: ${i.message}`).join("\n")))

describe("Self-hosted provider fields", () => {
  it.effect("base_urls stands in for base_url, with a probe interval", () =>
    Effect.gen(function*() {
      const catalog = yield* Catalog.decode(tei({ base_urls: ["http://tei-0:80", "http://tei-1:80"], health_interval_s: 2 }))
      assert.deepStrictEqual(catalog.providers[0]!.base_urls, ["http://tei-0:80", "http://tei-1:80"])
      assert.strictEqual(catalog.providers[0]!.health_interval_s, 2)
    }))

  it.effect("refuses both base_url and base_urls, a replica twice, none at all, and replicas on a cloud adapter", () =>
    Effect.gen(function*() {
      assert.include(yield* messages(tei({ base_url: "http://tei-0:80", base_urls: ["http://tei-1:80"] })), "not both")
      assert.include(yield* messages(tei({ base_urls: ["http://tei-0:80", "http://tei-0:80/"] })), "listed twice")
      assert.include(yield* messages(tei({})), "needs a base_url")
      assert.include(yield* messages(tei({ base_urls: [] })), "base_urls")
      assert.include(yield* messages(tei({ adapter: "cohere", base_urls: ["http://c:80"] })), "belongs to a self-hosted adapter")
    }))
})
