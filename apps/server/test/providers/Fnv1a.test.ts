import { assert, describe, it } from "@effect/vitest"
import { fnv1a } from "../../src/providers/Fnv1a.ts"

describe("Fnv1a", () => {
  it("matches the published 32-bit FNV-1a test vectors", () => {
    assert.strictEqual(fnv1a(""), 0x811c9dc5)
    assert.strictEqual(fnv1a("a"), 0xe40c292c)
    assert.strictEqual(fnv1a("foobar"), 0xbf9cf968)
  })
})
