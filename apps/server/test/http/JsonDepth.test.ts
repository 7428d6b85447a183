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

  it("fed chunk by chunk, finds the same byte, escapes and strings split across chunks included", () => {
    const text = bytes(String.raw`{"a":"x\"[[[","b":[[[[1]]]]}`)
    const whole = JsonDepth.firstTooDeep(text, 3)
    assert.strictEqual(whole, 20)
    for (let cut = 1; cut < text.length; cut++) {
      const scan = JsonDepth.scanner(3)
      const first = scan.push(text.subarray(0, cut))
      const at = first !== -1 ? first : scan.push(text.subarray(cut))
      assert.strictEqual(at, whole, `cut at ${cut}`)
    }
  })
})
