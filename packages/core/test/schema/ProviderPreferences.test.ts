import { assert, describe, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import * as fc from "fast-check"
import { isDeepStrictEqual } from "node:util"
import * as DecodeIssue from "../../src/schema/DecodeIssue.ts"
import { ProviderPreferences } from "../../src/schema/ProviderPreferences.ts"
import { customMetadata, TraceConfig } from "../../src/schema/TraceConfig.ts"
import { providerPreferences, trace } from "./arbitraries.ts"

const decode = Schema.decodeUnknownExit(ProviderPreferences)

const issuesOf = (u: unknown) => {
  const exit = Schema.decodeUnknownExit(ProviderPreferences)(u, { errors: "all" })
  if (Exit.isSuccess(exit)) return []
  const fail = exit.cause.reasons.find((r) => r._tag === "Fail")
  return fail?._tag === "Fail" ? DecodeIssue.fromSchemaError(fail.error) : []
}

const knownKeys = [
  "allow_fallbacks",
  "data_collection",
  "enforce_distillable_text",
  "ignore",
  "only",
  "order",
  "max_price",
  "preferred_max_latency",
  "preferred_min_throughput",
  "quantizations",
  "require_parameters",
  "sort",
  "zdr"
]

describe("ProviderPreferences", () => {
  it("decodes every valid preference object", () => {
    fc.assert(fc.property(providerPreferences, (p) => Exit.isSuccess(decode(p))), { numRuns: 300 })
  })

  it("accepts null for every nullable field", () => {
    const nulls = Object.fromEntries(knownKeys.filter((k) => k !== "max_price").map((k) => [k, null]))
    assert.isTrue(Exit.isSuccess(decode(nulls)))
  })

  it("refuses any unknown key, naming it", () => {
    fc.assert(
      fc.property(
        providerPreferences,
        fc.string({ minLength: 1, maxLength: 10 }).filter((k) => !knownKeys.includes(k) && k !== "__proto__"),
        (p, key) => {
          const issues = issuesOf({ ...p, [key]: 1 })
          return issues.length === 1 && issues[0]!.path === DecodeIssue.formatPath([key]) &&
            issues[0]!.message.includes("unknown property")
        }
      )
    )
  })

  it("refuses unknown keys in nested objects", () => {
    assert.deepStrictEqual(issuesOf({ max_price: { tokens: "1" } }).map((i) => i.path), ["max_price.tokens"])
    assert.deepStrictEqual(issuesOf({ sort: { by: "price", order: "asc" } }).map((i) => i.path), ["sort.order"])
    assert.deepStrictEqual(issuesOf({ preferred_min_throughput: { p95: 1 } }).map((i) => i.path), [
      "preferred_min_throughput.p95"
    ])
  })

  it("refuses max_price numbers, naming the field: the interface and the SDK type them as strings", () => {
    for (const prompt of [0, 0.05, 1e-7]) {
      const issues = issuesOf({ max_price: { prompt } })
      assert.deepStrictEqual(issues.map((i) => i.path), ["max_price.prompt"], String(prompt))
      assert.include(issues[0]!.message, "decimal string")
    }
    const exit = decode({ max_price: { prompt: "0.05", request: "0" } })
    assert.isTrue(Exit.isSuccess(exit))
  })

  it("refuses negative, non-numeric and over-precise prices", () => {
    for (const prompt of [-1, -0.5, "-1", "NaN", "Infinity", "1e-7", "0.1234567890123456789", "", " 1"]) {
      assert.deepStrictEqual(issuesOf({ max_price: { prompt } }).map((i) => i.path), ["max_price.prompt"], String(prompt))
    }
  })

  it("refuses negative cutoffs and unknown strategies", () => {
    assert.deepStrictEqual(issuesOf({ preferred_max_latency: -1 }).map((i) => i.path), ["preferred_max_latency"])
    assert.deepStrictEqual(issuesOf({ preferred_max_latency: { p50: -1 } }).map((i) => i.path), ["preferred_max_latency.p50"])
    assert.deepStrictEqual(issuesOf({ sort: { by: "cost" } }).map((i) => i.path), ["sort.by"])
  })
})

describe("TraceConfig", () => {
  it("keeps every key with its JSON value", () => {
    fc.assert(fc.property(trace, fc.dictionary(fc.string({ minLength: 1 }).filter((k) => k !== "__proto__"), fc.jsonValue()), (t, extra) => {
      const value = { ...extra, ...t }
      const exit = Schema.decodeUnknownExit(TraceConfig)(value)
      return Exit.isSuccess(exit) && isDeepStrictEqual(exit.value, value)
    }))
    const decoded = Schema.decodeUnknownSync(TraceConfig)({ trace_id: "t", team: "search", cost_center: { id: 7 } })
    assert.deepStrictEqual(decoded, { trace_id: "t", team: "search", cost_center: { id: 7 } })
  })

  it("holds the known keys to strings", () => {
    assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(TraceConfig)({ span_name: 3 })))
  })

  it("separates custom metadata from the known keys", () => {
    assert.deepStrictEqual(customMetadata({ trace_id: "t", span_name: "s", team: "search", n: [1] }), {
      team: "search",
      n: [1]
    })
  })
})
