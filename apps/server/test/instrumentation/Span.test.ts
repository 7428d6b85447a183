import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, References } from "effect"
import * as GatewayLogger from "../../src/observability/GatewayLogger.ts"
import * as Span from "../../src/instrumentation/Span.ts"

const spanName = Effect.currentSpan.pipe(Effect.map((span) => span.name), Effect.option)

describe("Span", () => {
  it.effect("with tracing off, makes no span and never computes its attributes", () =>
    Effect.gen(function*() {
      let computed = 0
      const attributes = () => {
        computed += 1
        return { "switchyard.n": 1 }
      }
      const name = yield* spanName.pipe(Span.within("Test.off", attributes), Effect.tap(Span.annotate(attributes)))
      assert.isTrue(Option.isNone(name))
      assert.strictEqual(computed, 0)
    }).pipe(Effect.provideService(References.TracerEnabled, false)))

  it.effect("with tracing on, runs the effect in a span of that name with its attributes", () =>
    Effect.gen(function*() {
      const span = yield* Effect.currentSpan.pipe(Span.within("Test.on", () => ({ "switchyard.n": 1 })))
      assert.strictEqual(span.name, "Test.on")
      assert.strictEqual(span.attributes.get("switchyard.n"), 1)
    }).pipe(Effect.provideService(References.TracerEnabled, true)))
})

describe("GatewayLogger.debug", () => {
  it.effect("builds a filtered line's annotations never, and a kept line's once", () =>
    Effect.gen(function*() {
      let built = 0
      const annotations = () => {
        built += 1
        return { generation_id: "gen-1" }
      }
      yield* GatewayLogger.debug("filtered", annotations).pipe(Effect.provideService(References.MinimumLogLevel, "Info"))
      assert.strictEqual(built, 0)
      yield* GatewayLogger.debug("kept", annotations).pipe(Effect.provideService(References.MinimumLogLevel, "Debug"))
      assert.strictEqual(built, 1)
    }))
})
