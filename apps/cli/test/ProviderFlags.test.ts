import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as ProviderFlags from "../src/ProviderFlags.ts"

const none: ProviderFlags.Input = {
  order: [], only: [], ignore: [], sort: Option.none(), maxPrice: Option.none(), noFallbacks: false,
  zdr: false, denyDataCollection: false, quantizations: [], requireParameters: false
}

describe("ProviderFlags", () => {
  it.effect("sends no provider object when no flag is given", () =>
    Effect.gen(function*() {
      assert.isUndefined(yield* ProviderFlags.toPreferences(none))
    }))

  it.effect("maps every flag to its field of the provider object", () =>
    Effect.gen(function*() {
      const preferences = yield* ProviderFlags.toPreferences({
        order: ["a", "b"], only: ["a"], ignore: ["c"], sort: Option.some("price"), maxPrice: Option.some("0.05"),
        noFallbacks: true, zdr: true, denyDataCollection: true, quantizations: ["fp16"], requireParameters: true
      })
      assert.deepStrictEqual(preferences, {
        order: ["a", "b"], only: ["a"], ignore: ["c"], sort: "price", max_price: { prompt: "0.05" },
        allow_fallbacks: false, zdr: true, data_collection: "deny", quantizations: ["fp16"], require_parameters: true
      })
    }))

  it.effect("reads per-kind prices and refuses unknown kinds", () =>
    Effect.gen(function*() {
      const preferences = yield* ProviderFlags.toPreferences({ ...none, maxPrice: Option.some("prompt=0.05, request=0") })
      assert.deepStrictEqual(preferences, { max_price: { prompt: "0.05", request: "0" } })
      const error = yield* Effect.flip(ProviderFlags.toPreferences({ ...none, maxPrice: Option.some("prompt=1,speed=2") }))
      assert.include(error.message, "\"speed=2\" is not KIND=USD")
    }))
})
