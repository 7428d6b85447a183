import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, References } from "effect"
import * as TraceContext from "../../src/pipeline/TraceContext.ts"

describe("TraceContext", () => {
  const trace = { trace_id: "t-1", trace_name: "ingest", span_name: "embed", generation_name: "g", parent_span_id: "p", team: "search" }

  it("keeps the known trace keys and the session id, never the custom keys", () => {
    assert.deepStrictEqual(TraceContext.annotationsOf({ trace }, "s-1"), {
      trace_id: "t-1",
      trace_name: "ingest",
      span_name: "embed",
      generation_name: "g",
      parent_span_id: "p",
      session_id: "s-1"
    })
    assert.deepStrictEqual(TraceContext.annotationsOf({}, undefined), {})
  })

  it.effect("puts them on every log line and span of the request's work", () =>
    Effect.gen(function*() {
      const lines: Array<Record<string, unknown>> = []
      const capture = Logger.make((options) => {
        lines.push({ ...options.fiber.getRef(References.CurrentLogAnnotations) })
      })
      const annotations = TraceContext.annotationsOf({ trace }, "s-1")
      const span = yield* Effect.gen(function*() {
        yield* Effect.logWarning("working")
        return yield* Effect.currentSpan.pipe(Effect.withSpan("adapter call"))
      }).pipe(TraceContext.within(annotations), Effect.withSpan("request"), Effect.provide(Logger.layer([capture])))
      assert.deepStrictEqual(lines, [annotations])
      for (const [key, value] of Object.entries(annotations)) assert.strictEqual(span.attributes.get(key), value)
      assert.isFalse(span.attributes.has("team"))
    }))
})
