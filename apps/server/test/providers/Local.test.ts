import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as Local from "../../src/providers/Local.ts"
import * as VectorEncoding from "../../src/providers/VectorEncoding.ts"
import { connection, image, items, reasonOf, request, text, texts, tokens } from "./ProviderHarness.ts"

const conn = connection("local:", undefined)

const norm = (vector: ReadonlyArray<number>) => Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0))

const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) =>
  a.reduce((sum, x, i) => sum + x * b[i]!, 0) / (norm(a) * norm(b))

const floats = (embedding: ReadonlyArray<number> | string) => embedding as ReadonlyArray<number>

describe("Local", () => {
  it.effect("embeds texts deterministically at unit length, 256 wide by default", () =>
    Effect.gen(function*() {
      const provider = Local.make()
      const first = yield* provider.embed(conn, request("local", texts("The cat sat on the mat.", "Quantum chromodynamics")))
      const again = yield* provider.embed(conn, request("local", texts("The cat sat on the mat.")))
      assert.deepStrictEqual(first.embeddings[0]!.embedding, again.embeddings[0]!.embedding)
      for (const { embedding } of first.embeddings) {
        assert.strictEqual(floats(embedding).length, 256)
        assert.closeTo(norm(floats(embedding)), 1, 1e-6)
      }
      assert.notDeepEqual(first.embeddings[0]!.embedding, first.embeddings[1]!.embedding)
      assert.strictEqual(first.promptTokens, 7 + 2)
      assert.strictEqual(first.totalTokens, 9)
    }))

  it.effect("places similar texts closer than unrelated ones", () =>
    Effect.gen(function*() {
      const result = yield* Local.make().embed(
        conn,
        request("local", texts("the cat sat on the mat", "the cat sat on a mat", "interest rates rose sharply in march"))
      )
      const [a, b, c] = result.embeddings.map((e) => floats(e.embedding))
      assert.isAbove(cosine(a!, b!), cosine(a!, c!))
      assert.isAbove(cosine(a!, b!), 0.5)
    }))

  it.effect("honours the configured width and a request's dimensions", () =>
    Effect.gen(function*() {
      const configured = yield* Local.make({ dimensions: 64 }).embed(conn, request("local", texts("x")))
      assert.strictEqual(floats(configured.embeddings[0]!.embedding).length, 64)
      const requested = yield* Local.make({ dimensions: 64 }).embed(conn, request("local", texts("x"), { dimensions: 1000 }))
      assert.strictEqual(floats(requested.embeddings[0]!.embedding).length, 1000)
      const tooWide = yield* reasonOf(Local.make().embed(conn, request("local", texts("x"), { dimensions: 100_000 })))
      assert.strictEqual(tooWide._tag, "UnsupportedInput")
    }))

  it.effect("embeds token ids and counts them", () =>
    Effect.gen(function*() {
      const result = yield* Local.make().embed(conn, request("local", tokens([101, 2023, 102], [], [7])))
      assert.strictEqual(result.promptTokens, 4)
      assert.strictEqual(result.embeddings.length, 3)
      for (const { embedding } of result.embeddings) assert.closeTo(norm(floats(embedding)), 1, 1e-6)
      assert.deepStrictEqual(result.embeddings[0]!.embedding, Local.embedTokens([101, 2023, 102], 256))
    }))

  it.effect("accepts text-only items and refuses media", () =>
    Effect.gen(function*() {
      const provider = Local.make()
      const result = yield* provider.embed(conn, request("local", items([text("a"), text("b")])))
      assert.deepStrictEqual(result.embeddings[0]!.embedding, Local.embedText("a\nb", 256))
      const reason = yield* reasonOf(provider.embed(conn, request("local", items([text("a")], [image("https://example.com/a.png")]))))
      assert.deepStrictEqual(reason, { _tag: "UnsupportedInput", detail: "input 1: the local model embeds text only, not image" })
    }))

  it.effect("answers base64 of exactly the float vector", () =>
    Effect.gen(function*() {
      const provider = Local.make()
      const asFloats = yield* provider.embed(conn, request("local", texts("hello")))
      const asBase64 = yield* provider.embed(conn, request("local", texts("hello"), { encodingFormat: "base64" }))
      assert.deepStrictEqual(VectorEncoding.fromBase64(asBase64.embeddings[0]!.embedding as string), asFloats.embeddings[0]!.embedding)
    }))

  it("features that cancel out still give a unit vector", () => {
    const vector = Local.embedText("IX;]", 1)
    assert.strictEqual(Math.abs(vector[0]!), 1)
  })

  it("every non-empty text gets a finite unit vector", () => {
    fc.assert(fc.property(fc.string({ minLength: 1 }), fc.integer({ min: 1, max: 512 }), (value, dimensions) => {
      const vector = Local.embedText(value, dimensions)
      return vector.length === dimensions && vector.every(Number.isFinite) && Math.abs(norm(vector) - 1) < 1e-5
    }))
  })
})
