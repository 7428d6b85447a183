import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as fc from "fast-check"
import { Workspace } from "../../src/catalog/Catalog.ts"
import * as Money from "../../src/catalog/Money.ts"
import type { Candidate } from "../../src/routing/Candidates.ts"
import { matchesSlug } from "../../src/routing/Candidates.ts"
import * as Filters from "../../src/routing/Filters.ts"
import type { Effective } from "../../src/routing/Preferences.ts"
import * as Preferences from "../../src/routing/Preferences.ts"
import { ProviderPreferences } from "../../src/schema/ProviderPreferences.ts"
import { providerPreferences } from "../schema/arbitraries.ts"
import { candidatesOf, catalogOf, specs } from "./fixtures.ts"

const slugList = fc.option(fc.array(fc.constantFrom("alpha", "beta", "gamma/turbo", "delta/fp8", "zeta"), { maxLength: 3 }))

const workspace = fc.record({
  only: slugList,
  ignore: fc.array(fc.constantFrom("alpha", "beta/default", "epsilon"), { maxLength: 2 }),
  data_collection: fc.constantFrom("allow", "deny"),
  zdr: fc.boolean()
}).map((w) => Schema.decodeUnknownSync(Workspace)(w))

const requestPrefs = providerPreferences.map((p) => Schema.decodeUnknownSync(ProviderPreferences)(p))

const sent = fc.subarray(["dimensions", "encoding_format", "input_type", "user", "output_dtype", "truncate"])
// What the gateway makes itself for every endpoint: never a reason to exclude one.
const gatewayMade = new Set(["encoding_format", "output_dtype", "truncate"])
const modalities = fc.subarray(["text", "tokens", "image"] as const, { minLength: 1 })

// An independent statement of every rule, for checking the filters against.
const allowed = (p: Effective, sentParameters: ReadonlyArray<string>, inputs: ReadonlyArray<string>, c: Candidate) =>
  (p.workspace_only === null || p.workspace_only.some((s) => matchesSlug(s, c))) &&
  (p.only === null || p.only.some((s) => matchesSlug(s, c))) &&
  !p.ignore.some((s) => matchesSlug(s, c)) &&
  (p.data_collection === "allow" || c.provider.data_collection === "deny") &&
  (!p.zdr || c.provider.zdr) &&
  (p.quantizations === null || p.quantizations.includes(c.endpoint.quantization)) &&
  inputs.every((m) => (c.endpoint.input_modalities as ReadonlyArray<string>).includes(m)) &&
  (!p.require_parameters || sentParameters.every((s) => gatewayMade.has(s) || c.endpoint.supported_parameters.includes(s))) &&
  (!p.enforce_distillable_text || c.endpoint.distillable) &&
  (["prompt", "completion", "image", "audio", "request"] as const).every((k) =>
    p.max_price[k] === undefined || Money.toAtto(c.endpoint.pricing[k]) <= p.max_price[k]!
  )

describe("Filters", () => {
  it("admits exactly the endpoints every rule allows, and names a rule for each exclusion", () => {
    fc.assert(
      fc.property(specs, requestPrefs, workspace, sent, modalities, (ss, request, ws, sentParameters, inputModalities) => {
        const candidates = candidatesOf(catalogOf(ss))
        const preferences = Preferences.effective(request, ws)
        const context = { preferences, sentParameters, inputModalities }
        const { eligible, excluded } = Filters.apply(context, candidates)
        return eligible.every((c) => allowed(preferences, sentParameters, inputModalities, c)) &&
          excluded.every(({ candidate, exclusion }) =>
            !allowed(preferences, sentParameters, inputModalities, candidate) &&
            Filters.filters.find(([name]) => name === exclusion.filter)![1](context, candidate) === exclusion.detail
          ) &&
          eligible.length + excluded.length === candidates.length
      }),
      { numRuns: 500 }
    )
  })

  const [alpha, beta, gammaTurbo, gammaFp8] = candidatesOf(catalogOf([
    { slug: "alpha", prompt: "0.02", data_collection: "allow", quantization: "fp16" },
    { slug: "beta", prompt: "0.1", data_collection: "deny", zdr: true, distillable: true, supported_parameters: ["dimensions"] },
    { slug: "gamma", variant: "turbo", prompt: "0.05", quantization: "fp8" },
    { slug: "gamma", variant: "default", prompt: "0.05", quantization: "fp8", input_modalities: ["text", "image"] }
  ]))
  const base = Preferences.effective(null, { only: null, ignore: [], data_collection: "allow", zdr: false, cache: false })
  const ctx = (p: Partial<Effective>, rest: Partial<Filters.FilterContext> = {}): Filters.FilterContext => ({
    preferences: { ...base, ...p },
    sentParameters: [],
    inputModalities: ["text"],
    ...rest
  })

  it("matches slugs by provider, variant or quantization", () => {
    assert.isTrue(matchesSlug("gamma", gammaTurbo!))
    assert.isTrue(matchesSlug("gamma/turbo", gammaTurbo!))
    assert.isTrue(matchesSlug("Gamma/FP8", gammaTurbo!))
    assert.isFalse(matchesSlug("gamma/default", gammaTurbo!))
    assert.isTrue(matchesSlug("gamma/default", gammaFp8!))
    assert.isFalse(matchesSlug("gam", gammaTurbo!))
  })

  it("applies each rule", () => {
    assert.isDefined(Filters.only(ctx({ only: ["beta"] }), alpha!))
    assert.isUndefined(Filters.only(ctx({ only: ["beta", "alpha"] }), alpha!))
    assert.isDefined(Filters.workspaceOnly(ctx({ workspace_only: ["gamma/turbo"] }), gammaFp8!))
    assert.isDefined(Filters.ignore(ctx({ ignore: ["gamma/turbo"] }), gammaTurbo!))
    assert.isUndefined(Filters.ignore(ctx({ ignore: ["gamma/turbo"] }), gammaFp8!))
    assert.isDefined(Filters.dataCollection(ctx({ data_collection: "deny" }), alpha!))
    assert.isUndefined(Filters.dataCollection(ctx({ data_collection: "deny" }), beta!))
    assert.isDefined(Filters.zdr(ctx({ zdr: true }), alpha!))
    assert.isUndefined(Filters.zdr(ctx({ zdr: true }), beta!))
    assert.isDefined(Filters.quantizations(ctx({ quantizations: ["fp8"] }), alpha!))
    assert.isDefined(Filters.inputModalities(ctx({}, { inputModalities: ["text", "image"] }), gammaTurbo!))
    assert.isUndefined(Filters.inputModalities(ctx({}, { inputModalities: ["text", "image"] }), gammaFp8!))
    assert.isUndefined(Filters.requireParameters(ctx({}, { sentParameters: ["dimensions"] }), alpha!))
    assert.isDefined(Filters.requireParameters(ctx({ require_parameters: true }, { sentParameters: ["dimensions"] }), alpha!))
    assert.isUndefined(Filters.requireParameters(ctx({ require_parameters: true }, { sentParameters: ["output_dtype", "truncate", "encoding_format"] }), alpha!))
    assert.isUndefined(Filters.dimensions(ctx({}, { dimensions: 3 }), alpha!))
    assert.isUndefined(Filters.requireParameters(ctx({ require_parameters: true }, { sentParameters: ["dimensions"] }), beta!))
    assert.isDefined(Filters.enforceDistillableText(ctx({ enforce_distillable_text: true }), alpha!))
    assert.isDefined(Filters.maxPrice(ctx({ max_price: { prompt: Money.toAtto("0.05") } }), beta!))
    assert.isUndefined(Filters.maxPrice(ctx({ max_price: { prompt: Money.toAtto("0.05") } }), gammaTurbo!))
    assert.include(Filters.maxPrice(ctx({ max_price: { prompt: Money.toAtto("0.05") } }), beta!), "prompt price 0.1 exceeds")
  })
})

describe("Preferences.effective", () => {
  it("lets a request narrow its workspace but never widen it", () => {
    const ws = { only: ["alpha", "beta"], ignore: ["gamma"], data_collection: "deny" as const, zdr: true, cache: false }
    const p = Preferences.effective({ only: ["gamma"], ignore: ["beta"], data_collection: "allow", zdr: false }, ws)
    assert.deepStrictEqual(p.workspace_only, ["alpha", "beta"])
    assert.deepStrictEqual(p.only, ["gamma"])
    assert.deepStrictEqual([...p.ignore].sort(), ["beta", "gamma"])
    assert.strictEqual(p.data_collection, "deny")
    assert.isTrue(p.zdr)
  })

  it("resolves nulls and shorthands", () => {
    const p = Preferences.effective({
      sort: "latency",
      preferred_max_latency: 2,
      preferred_min_throughput: { p90: 50, p99: null },
      quantizations: [],
      only: null
    }, { only: null, ignore: [], data_collection: "allow", zdr: false, cache: false })
    assert.deepStrictEqual(p.sort, { by: "latency", partition: "model" })
    assert.deepStrictEqual(p.preferred_max_latency, { p50: 2 })
    assert.deepStrictEqual(p.preferred_min_throughput, { p90: 50 })
    assert.isNull(p.quantizations)
    assert.isNull(p.only)
    assert.isTrue(p.allow_fallbacks)
    assert.isNull(Preferences.effective({ sort: { by: null, partition: "none" } }, base()).sort)
  })
})

function base() {
  return { only: null, ignore: [], data_collection: "allow" as const, zdr: false, cache: false }
}
