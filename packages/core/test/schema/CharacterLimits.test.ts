import { assert, describe, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import { CreateKeyBody } from "../../src/schema/ApiKey.ts"
import { CreateByokBody } from "../../src/schema/Byok.ts"
import { AddCreditsBody } from "../../src/schema/Credits.ts"
import { EmbeddingRequest } from "../../src/schema/EmbeddingRequest.ts"
import { UpdateInternBody } from "../../src/schema/Intern.ts"

// One character outside the Basic Multilingual Plane: one code point, two UTF-16 units.
const wide = "\u{1F680}"

const accepts = (schema: Schema.Top & { readonly DecodingServices: never }, value: unknown) =>
  Exit.isSuccess(Schema.decodeUnknownExit(schema)(value))

describe("every length limit counts characters as Unicode code points", () => {
  const limits: ReadonlyArray<readonly [string, Schema.Top & { readonly DecodingServices: never }, number, (text: string) => unknown]> = [
    ["session_id", EmbeddingRequest, 256, (text) => ({ model: "a/b", input: "x", session_id: text })],
    ["intern description", UpdateInternBody, 2000, (text) => ({ description: text })],
    ["intern model", UpdateInternBody, 200, (text) => ({ model: `v/${text}` })],
    ["key name", CreateKeyBody, 200, (text) => ({ name: text })],
    ["key external user", CreateKeyBody, 256, (text) => ({ name: "k", external: { user: text } })],
    ["BYOK name", CreateByokBody, 200, (text) => ({ provider: "openai", key: "sk-x", name: text })],
    ["credit note", AddCreditsBody, 500, (text) => ({ amount: "1", note: text })]
  ]
  for (const [field, schema, max, body] of limits) {
    it(`${field}: ${max} characters`, () => {
      const fill = field === "intern model" ? "m".repeat(max - 2) : wide.repeat(max)
      assert.isTrue(accepts(schema, body(fill)), `${max} characters are accepted`)
      assert.isFalse(accepts(schema, body(fill + (field === "intern model" ? "m" : wide))), `${max + 1} are not`)
    })
  }

  it("a name of wide characters is measured in characters too", () => {
    assert.isTrue(accepts(CreateKeyBody, { name: wide.repeat(150) }), "150 characters, 300 UTF-16 units")
  })
})
