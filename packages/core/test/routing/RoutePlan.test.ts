import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import * as fc from "fast-check"
import * as BuiltinCatalog from "../../src/catalog/BuiltinCatalog.ts"
import * as Catalog from "../../src/catalog/Catalog.ts"
import { matchesSlug } from "../../src/routing/Candidates.ts"
import type { PlanInput } from "../../src/routing/RoutePlan.ts"
import type { NoEligibleProvider } from "../../src/routing/RoutingError.ts"
import * as RoutePlan from "../../src/routing/RoutePlan.ts"
import type { ProviderPreferences } from "../../src/schema/ProviderPreferences.ts"
import { catalogOf, model, slugs, specs as anySpecs } from "./fixtures.ts"

const specs = anySpecs.map((ss) => ss.map((s) => ({ ...s, input_modalities: ["text"] })))

const now = 1_700_000_000_000
const all = () => true

const three = catalogOf([
  { slug: "alpha", prompt: "0.01" },
  { slug: "beta", prompt: "0.02" },
  { slug: "gamma", prompt: "0.03" }
])

const input = (patch: Partial<PlanInput> = {}): PlanInput => ({
  catalog: three,
  model,
  isActive: all,
  now,
  seed: 42,
  ...patch
})

const providersOf = (plan: RoutePlan.Plan) => plan.attempts.map((c) => c.provider.slug)


describe("RoutePlan.plan", () => {
  it.effect("fails with 404 for an unknown model", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(RoutePlan.plan(input({ model: "acme/nope" })))
      assert.strictEqual(error._tag, "ModelNotFound")
      assert.include(error.message, "acme/nope")
      assert.include(error.message, "does not exist")
    }))

  it.effect("fails with 404 explaining every exclusion when nothing is eligible", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(RoutePlan.plan(input({
        isActive: (p) => p.slug !== "gamma",
        preferences: { ignore: ["alpha"], max_price: { prompt: "0.015" } }
      })))
      assert.strictEqual(error._tag, "NoEligibleProvider")
      assert.include(error.message, "No allowed provider")
      const candidates = (error as NoEligibleProvider).metadata.candidates
      const reasons = Object.fromEntries(candidates.map((c) => [c.provider, c.excluded_by]))
      assert.deepStrictEqual(reasons, { alpha: "ignore", beta: "max_price", gamma: "inactive" })
    }))

  it.effect("serves the built-in local model with no credentials", () =>
    Effect.gen(function*() {
      const plan = yield* RoutePlan.plan({
        catalog: BuiltinCatalog.builtin,
        model: BuiltinCatalog.localModel,
        isActive: (p) => Catalog.isActive(p, {}),
        now,
        seed: 1
      })
      assert.deepStrictEqual(providersOf(plan), ["local"])
      const openai = yield* Effect.flip(RoutePlan.plan({
        catalog: BuiltinCatalog.builtin,
        model: "openai/text-embedding-3-small",
        isActive: (p) => Catalog.isActive(p, {}),
        now,
        seed: 1
      }))
      assert.include(openai.message, "openai/default@openai/text-embedding-3-small: provider credential is not configured")
    }))

  it("respects order, then falls back to the rest unless allow_fallbacks is false", () => {
    fc.assert(fc.property(
      specs,
      fc.array(fc.constantFrom(...slugs, "alpha/turbo", "beta/fp8", "nobody"), { minLength: 1, maxLength: 4 }),
      fc.boolean(),
      fc.integer(),
      (ss, order, allowFallbacks, seed) => {
        const catalog = catalogOf(ss)
        const exit = RoutePlan.compute(input({ catalog, seed, preferences: { order, allow_fallbacks: allowFallbacks } }))
        const matchesAny = (c: Parameters<typeof matchesSlug>[1]) => order.some((s) => matchesSlug(s, c))
        const total = catalog.providers.reduce((n, p) => n + p.endpoints.length, 0)
        if (Result.isFailure(exit)) return !allowFallbacks && !catalog.providers.some((p) => p.endpoints.some((endpoint) => matchesAny({ id: "", provider: p, endpoint })))
        const attempts = exit.success.attempts
        const firstIndex = (c: (typeof attempts)[number]) => order.findIndex((s) => matchesSlug(s, c))
        const ordered = attempts.filter(matchesAny)
        const prefixOk = attempts.slice(0, ordered.length).every(matchesAny)
        const inOrder = ordered.every((c, i) => i === 0 || firstIndex(ordered[i - 1]!) <= firstIndex(c))
        const sizeOk = allowFallbacks ? attempts.length === total : attempts.length === ordered.length
        return prefixOk && inOrder && sizeOk && new Set(attempts.map((c) => c.id)).size === attempts.length
      }
    ), { numRuns: 300 })
  })

  it("with allow_fallbacks false, holds only the primary provider", () => {
    fc.assert(fc.property(specs, fc.integer(), fc.option(fc.constantFrom("price", "latency", "throughput", "exacto")), (ss, seed, sort) => {
      const preferences: ProviderPreferences = { allow_fallbacks: false, sort }
      const exit = RoutePlan.compute(input({ catalog: catalogOf(ss), seed, preferences }))
      return Result.isSuccess(exit) && exit.success.attempts.length === 1
    }))
  })

  it("draws the primary with frequencies proportional to 1 / price²", () => {
    const runs = 6000
    const counts: Record<string, number> = { alpha: 0, beta: 0, gamma: 0 }
    for (let seed = 0; seed < runs; seed++) {
      const exit = RoutePlan.compute(input({ seed }))
      if (Result.isFailure(exit)) throw new Error("plan failed")
      counts[exit.success.attempts[0]!.provider.slug]! += 1
    }
    const w = [1, 1 / 4, 1 / 9]
    const total = w.reduce((a, b) => a + b, 0)
    assert.closeTo(counts.alpha! / runs, w[0]! / total, 0.02)
    assert.closeTo(counts.beta! / runs, w[1]! / total, 0.02)
    assert.closeTo(counts.gamma! / runs, w[2]! / total, 0.02)
  })

  it.effect("is reproducible from its seed and explains the draw", () =>
    Effect.gen(function*() {
      const a = yield* RoutePlan.plan(input({ seed: 7 }))
      const b = yield* RoutePlan.plan(input({ seed: 7 }))
      assert.deepStrictEqual(providersOf(a), providersOf(b))
      assert.strictEqual(a.explanation.mode, "default")
      assert.strictEqual(a.explanation.seed, 7)
      assert.deepStrictEqual(a.explanation.draw?.pool, a.explanation.candidates.map((c) => c.id))
      const weights = a.explanation.candidates.map((c) => c.weight ?? 0)
      assert.closeTo(weights.reduce((x, y) => x + y, 0), 1, 1e-9)
      assert.deepStrictEqual(providersOf(a).slice(1), ["alpha", "beta", "gamma"].filter((s) => s !== providersOf(a)[0]))
    }))

  it.effect("leaves endpoints that failed in the last 30 s out of the draw, as last fallbacks", () =>
    Effect.gen(function*() {
      const stats = {
        "alpha/default@acme/embed-1": { lastFailureAt: now - 10_000 },
        "beta/default@acme/embed-1": { lastFailureAt: now - 31_000 }
      }
      for (let seed = 0; seed < 50; seed++) {
        const plan = yield* RoutePlan.plan(input({ seed, stats }))
        assert.notStrictEqual(providersOf(plan)[0], "alpha")
        assert.strictEqual(providersOf(plan)[2], "alpha")
      }
    }))

  it.effect("under order and sort, tries endpoints inside their outage window after the others, unless fallbacks are off", () =>
    Effect.gen(function*() {
      const failedAt = (ms: number) => ({ "alpha/default@acme/embed-1": { lastFailureAt: now - ms } })
      const plan = (stats: PlanInput["stats"], preferences: ProviderPreferences) =>
        RoutePlan.plan(input({ stats, preferences })).pipe(Effect.map(providersOf))
      const ordered = { order: ["alpha", "beta"] }
      // Failed 10 s ago: inside the 30 s window, so the healthy ones go first; it stays a last resort.
      assert.deepStrictEqual(yield* plan(failedAt(10_000), ordered), ["beta", "gamma", "alpha"])
      assert.deepStrictEqual(yield* plan(failedAt(10_000), { sort: "price" }), ["beta", "gamma", "alpha"])
      assert.deepStrictEqual(yield* plan(failedAt(10_000), { sort: "exacto" }), ["beta", "gamma", "alpha"])
      // Out of the window, the caller's order and the sort stand again.
      assert.deepStrictEqual(yield* plan(failedAt(30_000), ordered), ["alpha", "beta", "gamma"])
      assert.deepStrictEqual(yield* plan(failedAt(30_000), { sort: "price" }), ["alpha", "beta", "gamma"])
      // Pinned endpoints keep their order: the caller asked for exactly these.
      assert.deepStrictEqual(yield* plan(failedAt(10_000), { ...ordered, allow_fallbacks: false }), ["alpha", "beta"])
      assert.deepStrictEqual(yield* plan(failedAt(10_000), { sort: "price", allow_fallbacks: false }), ["alpha"])
      const explained = yield* RoutePlan.plan(input({ stats: failedAt(10_000), preferences: ordered }))
      assert.deepStrictEqual(explained.explanation.candidates.map((c) => [c.provider, c.rank, c.recent_failure]), [
        ["beta", 0, false],
        ["gamma", 1, false],
        ["alpha", 2, true]
      ])
    }))

  it.effect("deprioritises endpoints that miss a performance cutoff without excluding them", () =>
    Effect.gen(function*() {
      const stats = {
        "alpha/default@acme/embed-1": { latency: { p50: 3, p90: 4 }, throughput: { p50: 500 } },
        "beta/default@acme/embed-1": { latency: { p50: 0.5, p90: 0.9 }, throughput: { p50: 100 } },
        "gamma/default@acme/embed-1": { latency: { p50: 0.4, p90: 2 }, throughput: { p50: 900 } }
      }
      const byLatency = yield* RoutePlan.plan(input({ stats, preferences: { preferred_max_latency: { p50: 1, p90: 1 } } }))
      assert.deepStrictEqual(providersOf(byLatency), ["beta", "alpha", "gamma"])
      const sorted = yield* RoutePlan.plan(input({
        stats,
        preferences: { sort: "price", preferred_min_throughput: 400, preferred_max_latency: 1 }
      }))
      assert.deepStrictEqual(providersOf(sorted), ["gamma", "alpha", "beta"])
      assert.deepStrictEqual(sorted.explanation.candidates.map((c) => c.meets_cutoffs), [true, false, false])
    }))

  it.effect("sorts without load balancing", () =>
    Effect.gen(function*() {
      const stats = {
        "alpha/default@acme/embed-1": { throughput: { p50: 10 }, latency: { p50: 2 } },
        "beta/default@acme/embed-1": { throughput: { p50: 300 }, latency: { p50: 0.3 } },
        "gamma/default@acme/embed-1": { throughput: { p50: 100 } }
      }
      const by = (sort: NonNullable<ProviderPreferences["sort"]>) =>
        RoutePlan.plan(input({ stats, preferences: { sort } })).pipe(Effect.map(providersOf))
      assert.deepStrictEqual(yield* by("price"), ["alpha", "beta", "gamma"])
      assert.deepStrictEqual(yield* by("throughput"), ["beta", "gamma", "alpha"])
      assert.deepStrictEqual(yield* by({ by: "latency", partition: "none" }), ["beta", "alpha", "gamma"])
      const plan = yield* RoutePlan.plan(input({ stats, preferences: { sort: "throughput" } }))
      assert.strictEqual(plan.explanation.mode, "sort")
      assert.deepStrictEqual(plan.explanation.candidates.map((c) => c.sort_key), [300, 100, 10])
      assert.isUndefined(plan.explanation.draw)
    }))

  it.effect("applies workspace settings the request cannot widen", () =>
    Effect.gen(function*() {
      const workspace = { only: ["alpha", "beta"], ignore: ["beta"], data_collection: "allow" as const, zdr: false, cache: false }
      const plan = yield* RoutePlan.plan(input({ workspace, preferences: { only: ["alpha", "beta", "gamma"] } }))
      assert.deepStrictEqual(providersOf(plan), ["alpha"])
      const report = Object.fromEntries(plan.explanation.candidates.map((c) => [c.provider, c.excluded_by ?? c.status]))
      assert.deepStrictEqual(report, { alpha: "attempt", beta: "ignore", gamma: "workspace_only" })
    }))

  it.effect("fails when allow_fallbacks is false and nothing in order can serve", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(RoutePlan.plan(input({ preferences: { order: ["zeta"], allow_fallbacks: false } })))
      assert.include(error.message, "provider.order")
      const fallback = yield* RoutePlan.plan(input({ preferences: { order: ["zeta", "gamma"] } }))
      assert.strictEqual(providersOf(fallback)[0], "gamma")
      assert.strictEqual(fallback.explanation.mode, "order")
    }))
})

describe("RoutePlan: parameters an endpoint lacks (require_parameters omitted)", () => {
  const mixed = catalogOf([
    { slug: "alpha", prompt: "0.001", supported_parameters: ["encoding_format"] },
    { slug: "beta", prompt: "0.5", supported_parameters: ["dimensions", "encoding_format"] },
    { slug: "gamma", prompt: "0.2", supported_parameters: ["dimensions"] }
  ])

  it("keeps endpoints lacking a sent parameter, after those that support every one, in every mode", () => {
    for (let seed = 0; seed < 50; seed++) {
      const drawn = Result.getOrThrow(RoutePlan.compute(input({ catalog: mixed, seed, sentParameters: ["dimensions", "encoding_format"] })))
      assert.strictEqual(providersOf(drawn).at(-1), "alpha")
      assert.sameMembers(providersOf(drawn).slice(0, 2), ["beta", "gamma"])
    }
    const sorted = Result.getOrThrow(RoutePlan.compute(input({ catalog: mixed, sentParameters: ["dimensions"], preferences: { sort: "price" } })))
    assert.deepStrictEqual(providersOf(sorted), ["gamma", "beta", "alpha"])
    const report = sorted.explanation.candidates.find((c) => c.provider === "alpha")!
    assert.deepStrictEqual(report.missing_parameters, ["dimensions"])
    const ordered = Result.getOrThrow(RoutePlan.compute(input({ catalog: mixed, sentParameters: ["dimensions"], preferences: { order: ["alpha"] } })))
    assert.deepStrictEqual(providersOf(ordered), ["alpha", "gamma", "beta"])
  })

  it("encoding_format never makes an endpoint less preferred, and without parameters price decides", () => {
    const sorted = Result.getOrThrow(RoutePlan.compute(input({ catalog: mixed, sentParameters: ["encoding_format"], preferences: { sort: "price" } })))
    assert.deepStrictEqual(providersOf(sorted), ["alpha", "gamma", "beta"])
  })

  it("require_parameters: true excludes them instead", () => {
    const strict = Result.getOrThrow(RoutePlan.compute(input({
      catalog: mixed,
      sentParameters: ["dimensions"],
      preferences: { require_parameters: true, sort: "price" }
    })))
    assert.deepStrictEqual(providersOf(strict), ["gamma", "beta"])
  })

  it("require_parameters: true never excludes an endpoint for what the gateway makes itself", () => {
    const strict = Result.getOrThrow(RoutePlan.compute(input({
      catalog: mixed,
      sentParameters: ["encoding_format", "output_dtype", "truncate"],
      preferences: { require_parameters: true, sort: "price" }
    })))
    assert.deepStrictEqual(providersOf(strict), ["alpha", "gamma", "beta"])
  })

  it("a width no endpoint of a Matryoshka model allows is a 400 naming its widths; an endpoint that does not allow it is left out", () => {
    const widths = catalogOf([
      { slug: "alpha", prompt: "0.01", matryoshka: [2, 4, 8] },
      { slug: "beta", prompt: "0.02", matryoshka: true }
    ])
    const refused = RoutePlan.compute(input({ catalog: widths, dimensions: 9 }))
    assert.isTrue(Result.isFailure(refused))
    const error = Result.isFailure(refused) ? refused.failure : undefined
    assert.strictEqual(error?._tag, "WidthNotOffered")
    assert.include(error?.message, "2, 4, 8")
    const some = Result.getOrThrow(RoutePlan.compute(input({ catalog: widths, dimensions: 3, preferences: { sort: "price" } })))
    assert.deepStrictEqual(providersOf(some), ["beta"])
    assert.strictEqual(some.explanation.candidates.find((c) => c.provider === "alpha")?.excluded_by, "dimensions")
    const plain = catalogOf([{ slug: "alpha", prompt: "0.01" }])
    assert.deepStrictEqual(providersOf(Result.getOrThrow(RoutePlan.compute(input({ catalog: plain, dimensions: 9 })))), ["alpha"])
  })
})


describe("RoutePlan: providers named as the public API names them", () => {
  const bge = (preferences: ProviderPreferences) =>
    providersOf(Result.getOrThrow(RoutePlan.compute(input({ catalog: BuiltinCatalog.builtin, model: "baai/bge-large-en-v1.5", preferences }))))

  it("order, only and ignore take the SDK's provider names, the configured names and slugs, in any case", () => {
    assert.strictEqual(bge({ order: ["Together"] })[0], "together")
    assert.strictEqual(bge({ order: ["DeepInfra"] })[0], "deepinfra")
    assert.strictEqual(bge({ order: ["together ai"] })[0], "together")
    assert.strictEqual(bge({ order: [" TOGETHER "] })[0], "together")
    assert.deepStrictEqual(bge({ only: ["DeepInfra"] }), ["deepinfra"])
    assert.notInclude(bge({ ignore: ["Together"] }), "together")
    assert.deepStrictEqual(bge({ only: ["Together/default"] }), ["together"])
    const gemini = Result.getOrThrow(RoutePlan.compute(input({
      catalog: BuiltinCatalog.builtin,
      model: "google/gemini-embedding-001",
      preferences: { only: ["Google AI Studio"], allow_fallbacks: false }
    })))
    assert.deepStrictEqual(providersOf(gemini), ["google-ai-studio"])
    for (const [name, slug] of [["OpenAI", "openai"], ["Cohere", "cohere"], ["VoyageAI by MongoDB", "voyage"], ["Mistral", "mistral"], ["Fireworks", "fireworks"]] as const) {
      const provider = BuiltinCatalog.builtin.providers.find((p) => p.slug === slug)!
      assert.isTrue(matchesSlug(name, { id: "x", provider, endpoint: provider.endpoints[0]! }), name)
    }
  })
})
