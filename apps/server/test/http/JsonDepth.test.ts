import { assert, describe, it } from "@effect/vitest"
import * as JsonDepth from "../../src/http/JsonDepth.ts"

const bytes = (text: string) => new TextEncoder().encode(text)

describe("JsonDepth.firstTooDeep", () => {
  it("accepts bodies up to the limit and finds the first byte past it", () => {
    assert.strictEqual(JsonDepth.firstTooDeep(bytes(`{"input":[[1,2],[3]]}`), 3), -1)
    assert.strictEqual(JsonDepth.firstTooDeep(bytes(`{"input":[[1,2],[3]]}`), 2), 10)
    assert.strictEqual(JsonDepth.firstTooDeep(bytes("[".repeat(64) + "]".repeat(64))), -1)
    assert.strictEqual(JsonDepth.firstTooDeep(bytes("[".repeat(100_000))), 64)
    assert.strictEqual(JsonDepth.firstTooDeep(bytes(`{"a":{"b":{"c":{}}}}`), 3), 15)
  })

  it("does not count brackets inside strings, escaped quotes included", () => {
    assert.strictEqual(JsonDepth.firstTooDeep(bytes(JSON.stringify({ input: "[[[[[[{{{{" })), 1), -1)
    assert.strictEqual(JsonDepth.firstTooDeep(bytes(JSON.stringify({ input: "\"[[[[\\\"[[" })), 1), -1)
    assert.strictEqual(JsonDepth.firstTooDeep(bytes(`["\\\\",[[`), 2), 7)
  })

  it("closing brackets of malformed JSON never hide a deep prefix", () => {
    assert.strictEqual(JsonDepth.firstTooDeep(bytes(`]]]]${"[".repeat(10)}`), 10), -1)
    assert.strictEqual(JsonDepth.firstTooDeep(bytes("[".repeat(11)), 10), 10)
  })
})
