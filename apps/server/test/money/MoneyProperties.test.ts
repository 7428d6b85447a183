/**
 * One set of money rules, proven equal: generated sequences of money operations played on core's
 * reference model (`MoneyModel`) and on the money store, with the same answers and the same books
 * asserted after every sequence. `pnpm test`: SQLite against the model; `test:pg`: the model,
 * SQLite and PostgreSQL. `SWITCHYARD_PROPERTY_RUNS` raises the number of sequences; a failure
 * prints fast-check's seed, path and shrunk counterexample, which `SWITCHYARD_PROPERTY_SEED` and
 * `SWITCHYARD_PROPERTY_PATH` replay.
 */
import { describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fc from "fast-check"
import * as MoneyStore from "../../src/store/money/MoneyStore.ts"
import { parameters, pgClockLayer, runs, sameAsModel, scenario, type StoreUnderTest } from "../support/MoneyProperty.ts"
import { moneyStores, sqlLayer } from "../support/MoneyStore.ts"

/** The stores of this run, each built once for every sequence (a sequence's ids are its own; holds and process rows are emptied). */
const storesUnderTest = Effect.forEach(moneyStores, (kind) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(kind === "postgres" ? pgClockLayer() : sqlLayer("sqlite"))
    return { name: kind, context, make: MoneyStore.make } satisfies StoreUnderTest
  }))

describe("the money rules: the stores and the model agree on generated sequences", () => {
  it.effect(`${moneyStores.join(", ")} answer and book every sequence as the model does`, () =>
    Effect.gen(function*() {
      const stores = yield* storesUnderTest
      yield* Effect.promise(() => fc.assert(fc.asyncProperty(scenario(), (s) => sameAsModel(s, stores)), parameters(runs(500))))
    }).pipe(Effect.scoped), { timeout: 600_000 })
})
