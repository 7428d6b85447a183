import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Catalog from "../../src/catalog/Catalog.ts"
import * as Cost from "../../src/catalog/Cost.ts"
import * as Money from "../../src/catalog/Money.ts"
import * as SearchUnits from "../../src/catalog/SearchUnits.ts"
import { routingToApiError } from "../../src/routing/RoutingError.ts"
import { priceText } from "../../src/routing/CandidateReport.ts"
import * as RoutePlan from "../../src/routing/RoutePlan.ts"

const provider = (slug: string, adapter: string, endpoints: ReadonlyArray<Record<string, unknown>>) => ({
  slug, name: slug, adapter, base_url: `http://127.0.0.1/${slug}`, data_collection: "deny", endpoints
})

// One model for each task, and a rerank model priced per search at one provider and per token at
// another.
const catalog = Effect.runSync(Catalog.decode({
  providers: [
    provider("searchy", "cohere", [{ model: "acme/rerank", upstream_model: "r", task: "rerank", pricing: { search: "2" }, max_documents: 100 }]),
    provider("tokeny", "voyage", [{ model: "acme/rerank", upstream_model: "r", task: "rerank", pricing: { prompt: "0.05" } }]),
    provider("embedder", "openai", [{ model: "acme/embed", upstream_model: "e", pricing: { prompt: "0.02" }, dimensions: 8, max_batch_items: 16 }])
  ]
}))

const plan = (patch: Partial<RoutePlan.PlanInput>) =>
  RoutePlan.plan({ catalog, model: "acme/rerank", task: "rerank", isActive: () => true, now: 0, seed: 7, ...patch })

describe("routing by task", () => {
  it.effect("a model is served only for its own task; the other task is a 400 naming it", () =>
    Effect.gen(function*() {
      const asEmbeddings = yield* Effect.flip(plan({ task: "embeddings" }))
      assert.strictEqual(asEmbeddings._tag, "WrongTask")
      assert.include(asEmbeddings.message, "is a rerank model")
      assert.strictEqual(routingToApiError(asEmbeddings)._tag, "BadRequest")
      const asRerank = yield* Effect.flip(plan({ model: "acme/embed" }))
      assert.strictEqual(asRerank._tag, "WrongTask")
      assert.include(asRerank.message, "POST /api/v1/embeddings")
      const unknown = yield* Effect.flip(plan({ model: "acme/none" }))
      assert.strictEqual(unknown._tag, "ModelNotFound")
      assert.strictEqual(routingToApiError(unknown)._tag, "NotFound")
    }))

  it.effect("prices in different units compare by what the request would cost", () =>
    Effect.gen(function*() {
      // 10 documents of 30 tokens and a 5-token query: one search unit ($0.002) against 350 tokens
      // ($0.0000175): the per-token endpoint is cheaper.
      const small = { prompt_tokens: SearchUnits.tokensOfCall(5, Array(10).fill(30)), search_units: SearchUnits.ofCall(5, Array(10).fill(30)) }
      const cheap = yield* plan({ preferences: { sort: "price" }, consumption: small })
      assert.deepStrictEqual(cheap.attempts.map((c) => c.provider.slug), ["tokeny", "searchy"])
      // A request billed as one search unit ($0.002) but 10^8 tokens ($5) at the other: the order turns.
      const huge = { prompt_tokens: 100_000_000, search_units: 1 }
      const turned = yield* plan({ preferences: { sort: "price" }, consumption: huge })
      assert.deepStrictEqual(turned.attempts.map((c) => c.provider.slug), ["searchy", "tokeny"])
      assert.strictEqual(turned.explanation.candidates[0]!.sort_key, Money.toDecimal(Cost.compute(turned.attempts[0]!.endpoint.pricing, huge).total))
      // The report shows both price kinds of a rerank endpoint, so a search-priced one is not read as free.
      const reported = Object.fromEntries(turned.explanation.candidates.map((c) => [c.provider, [c.prompt_price, c.search_price]]))
      assert.deepStrictEqual(reported.searchy, ["0", "2"])
      assert.strictEqual(reported.tokeny![1], "0")
    }))

  it.effect("every preference filters rerank endpoints as it does embeddings endpoints", () =>
    Effect.gen(function*() {
      const only = yield* plan({ preferences: { only: ["searchy"] } })
      assert.deepStrictEqual(only.attempts.map((c) => c.provider.slug), ["searchy"])
      const capped = yield* plan({ preferences: { max_price: { search: "1" } } })
      assert.deepStrictEqual(capped.attempts.map((c) => c.provider.slug), ["tokeny"])
      const required = yield* Effect.flip(plan({ preferences: { require_parameters: true }, sentParameters: ["max_tokens_per_doc"] }))
      assert.strictEqual(required._tag, "NoEligibleProvider")
    }))

  it("words an endpoint's price by the kinds it charges", () => {
    assert.strictEqual(priceText({ prompt_price: "0.02" }), "$0.02/M tokens")
    assert.strictEqual(priceText({ prompt_price: "0", search_price: "2" }), "$2/1k searches")
    assert.strictEqual(priceText({ prompt_price: "0.05", search_price: "0" }), "$0.05/M tokens")
    assert.strictEqual(priceText({ prompt_price: "0.05", search_price: "1" }), "$1/1k searches + $0.05/M tokens")
    assert.strictEqual(priceText({ prompt_price: "0", search_price: "0" }), "free")
  })

  it("search units: one per 100 documents, a long document counting once per 500 tokens", () => {
    assert.strictEqual(SearchUnits.ofCall(10, Array(100).fill(100)), 1)
    assert.strictEqual(SearchUnits.ofCall(10, Array(101).fill(100)), 2)
    assert.strictEqual(SearchUnits.ofCall(10, [1_200]), 1)
    assert.strictEqual(SearchUnits.ofCall(10, Array(50).fill(1_200)), 2)
    assert.strictEqual(Money.toDecimal(Cost.compute({ prompt: "0", search: "2", completion: "0", request: "0", image: "0", audio: "0" }, { prompt_tokens: 0, search_units: 3 }).total), "0.006")
  })

  it.effect("the catalog refuses a rerank endpoint on an adapter without a rerank API, and embeddings fields on a rerank endpoint", () =>
    Effect.gen(function*() {
      const issues = (endpoint: Record<string, unknown>, adapter = "gemini") =>
        Effect.flip(Catalog.decode({ providers: [provider("g", adapter, [{ model: "a/b", upstream_model: "b", task: "rerank", pricing: {}, ...endpoint }])] }))
          .pipe(Effect.map((error) => error.issues.map((i) => `${i.path}: ${i.message}`).join("\n")))
      assert.include(yield* issues({}), "adapter gemini has no rerank API")
      assert.include(yield* issues({ dimensions: 8 }, "cohere"), "a rerank endpoint has no dimensions")
      const missing = yield* Effect.flip(Catalog.decode({
        providers: [provider("o", "openai", [{ model: "a/b", upstream_model: "b", pricing: {} }])]
      }))
      assert.include(missing.issues.map((i) => i.message).join("\n"), "an embeddings endpoint needs dimensions")
      assert.include(yield* issues({ input_modalities: ["text", "image"] }, "cohere"), "the rerank API of adapter cohere takes text documents only")
      assert.include(yield* issues({ input_modalities: ["text", "audio"] }, "jina"), "a rerank endpoint takes text and image documents, not audio")
      yield* Catalog.decode({ providers: [provider("j", "jina", [{ model: "a/b", upstream_model: "b", task: "rerank", input_modalities: ["text", "image"], pricing: {} }])] })
    }))

  it.effect("images go only to rerank endpoints that list them; a model none of whose endpoints takes them is a 400", () =>
    Effect.gen(function*() {
      const vision = Effect.runSync(Catalog.decode({
        providers: [
          provider("texty", "jina", [{ model: "acme/vision", upstream_model: "v2", task: "rerank", pricing: { prompt: "0.01" } }]),
          provider("seer", "jina", [{ model: "acme/vision", upstream_model: "m0", task: "rerank", input_modalities: ["text", "image"], pricing: { prompt: "1" } }])
        ]
      }))
      const withImages = { catalog: vision, model: "acme/vision", inputModalities: ["text", "image"] as const }
      const routed = yield* plan(withImages)
      assert.deepStrictEqual(routed.attempts.map((c) => c.provider.slug), ["seer"])
      const texty = routed.explanation.candidates.find((c) => c.provider === "texty")!
      assert.strictEqual(texty.excluded_by, "input_modalities")
      const pinned = yield* Effect.flip(plan({ ...withImages, preferences: { only: ["texty"] } }))
      assert.strictEqual(pinned._tag, "NoEligibleProvider")
      assert.strictEqual(routingToApiError(pinned)._tag, "NotFound")
      const textModel = yield* Effect.flip(plan({ inputModalities: ["text", "image"] }))
      assert.strictEqual(textModel._tag, "InputNotAccepted")
      assert.include(textModel.message, "Model \"acme/rerank\" takes no image documents: its endpoints accept text only")
      assert.strictEqual(routingToApiError(textModel)._tag, "BadRequest")
    }))
})
