import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as VectorEncoding from "../../src/providers/VectorEncoding.ts"
import { reasonOf, request, texts } from "./ProviderHarness.ts"

const finiteFloat32 = fc.float({ noNaN: true, noDefaultInfinity: true })

const two = request("m", texts("a", "b"))

describe("VectorEncoding", () => {
  it("float32 values survive float → base64 → float exactly", () => {
    fc.assert(fc.property(fc.array(finiteFloat32, { minLength: 1, maxLength: 64 }), (vector) => {
      assert.deepStrictEqual(VectorEncoding.fromBase64(VectorEncoding.toBase64(vector)), vector)
    }))
  })

  it("base64 of finite float32 survives base64 → float → base64 exactly", () => {
    fc.assert(fc.property(fc.array(finiteFloat32, { minLength: 1, maxLength: 64 }), (vector) => {
      const bytes = Buffer.alloc(vector.length * 4)
      vector.forEach((x, i) => {
        bytes.writeFloatLE(x, i * 4)
      })
      const encoded = bytes.toString("base64")
      assert.strictEqual(VectorEncoding.toBase64(VectorEncoding.fromBase64(encoded)!), encoded)
    }))
  })

  it("writes little-endian float32", () => {
    assert.strictEqual(VectorEncoding.toBase64([1]), "AACAPw==")
    assert.deepStrictEqual(VectorEncoding.fromBase64("AAAAPwAAgL4AAMA/"), [0.5, -0.25, 1.5])
  })

  it("measures base64 without decoding and rejects what is not base64", () => {
    assert.strictEqual(VectorEncoding.byteLength("AACAPw=="), 4)
    assert.strictEqual(VectorEncoding.byteLength("AAAAAAAA"), 6)
    assert.isUndefined(VectorEncoding.byteLength("AAA"))
    assert.isUndefined(VectorEncoding.byteLength("AA!A"))
    assert.isUndefined(VectorEncoding.fromBase64("AAAAAAAA"))
  })

  describe("kept vectors (the embeddings cache)", () => {
    const upstreamBody = (vector: string) => Buffer.from(`{"data":[{"embedding":${vector},"index":0}]}`, "latin1")
    const locatedIn = (body: Buffer) => VectorEncoding.locate(body)!.vectors[0]!

    it("keeps the upstream's bytes in a buffer of their own, and stores and reads them back exactly", () => {
      for (const [json, encoding, text] of [
        ["[0.1,-2e-7,3]", "float", "[0.1,-2e-7,3]"],
        ["\"AACAPw==\"", "base64", "AACAPw=="]
      ] as const) {
        const body = upstreamBody(json)
        const forwarded = locatedIn(body)
        const kept = VectorEncoding.keep(forwarded)
        assert.strictEqual(Buffer.from(kept.json).toString("latin1"), json)
        // Not a view of the upstream's body: the entry does not hold it in memory.
        assert.notStrictEqual(kept.json.buffer, body.buffer)
        assert.strictEqual(kept.json.buffer.byteLength, json.length)
        body.fill(0)
        assert.strictEqual(Buffer.from(kept.json).toString("latin1"), json)
        const stored = VectorEncoding.toStored(kept)
        assert.deepStrictEqual(stored, { encoding, text, width: encoding === "float" ? 3 : 1 })
        assert.strictEqual(VectorEncoding.storedBytes(kept), text.length)
        assert.deepStrictEqual(VectorEncoding.fromStored(stored), kept)
      }
    })

    it("keeps plain vectors as their JSON", () => {
      const float = VectorEncoding.keep([0.5, -1])
      assert.strictEqual(Buffer.from(float.json).toString("latin1"), "[0.5,-1]")
      assert.deepStrictEqual([float.encoding, float.width], ["float", 2])
      const base64 = VectorEncoding.keep("AAAAPwAAgL4=")
      assert.strictEqual(Buffer.from(base64.json).toString("latin1"), "\"AAAAPwAAgL4=\"")
      assert.deepStrictEqual([base64.encoding, base64.width], ["base64", 2])
    })

    it("serves the kept bytes themselves in their encoding, and the same float32 values in the other", () => {
      const float = VectorEncoding.fromStored({ encoding: "float", text: "[0.5,-0.25,1.5]", width: 3 })
      assert.strictEqual(VectorEncoding.inEncoding(float, "float"), float)
      assert.strictEqual(VectorEncoding.inEncoding(float, "base64"), "AAAAPwAAgL4AAMA/")
      const base64 = VectorEncoding.fromStored({ encoding: "base64", text: "AAAAPwAAgL4AAMA/", width: 3 })
      assert.strictEqual(VectorEncoding.inEncoding(base64, "base64"), base64)
      assert.deepStrictEqual(VectorEncoding.inEncoding(base64, "float"), [0.5, -0.25, 1.5])
    })
  })

  describe("finish", () => {
    it.effect("orders by index and converts to the wanted encoding", () =>
      Effect.gen(function*() {
        const floats = yield* VectorEncoding.finish(two, [{ index: 1, value: [3, 4] }, { index: 0, value: "AACAPwAAAEA=" }])
        assert.deepStrictEqual(floats, [{ index: 0, embedding: [1, 2] }, { index: 1, embedding: [3, 4] }])
        const base64 = yield* VectorEncoding.finish({ ...two, encodingFormat: "base64" }, [
          { index: 0, value: "AACAPwAAAEA=" },
          { index: 1, value: [3, 4] }
        ])
        assert.deepStrictEqual(base64, [
          { index: 0, embedding: "AACAPwAAAEA=" },
          { index: 1, embedding: VectorEncoding.toBase64([3, 4]) }
        ])
      }))

    const invalid = (raw: ReadonlyArray<VectorEncoding.RawVector>, req = two) =>
      reasonOf(VectorEncoding.finish(req, raw)).pipe(Effect.map((reason) => reason._tag === "InvalidResponse" ? reason.detail : reason._tag))

    it.effect("rejects wrong counts, bad indices, mixed widths and bad base64", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* invalid([{ index: 0, value: [1] }]), "expected 2 vectors, got 1")
        assert.strictEqual(yield* invalid([{ index: 0, value: [1] }, { index: 0, value: [2] }]), "vector index 0 appears twice")
        assert.strictEqual(yield* invalid([{ index: 0, value: [1] }, { index: 2, value: [2] }]), "vector index 2 is out of range")
        assert.strictEqual(
          yield* invalid([{ index: 0, value: [1, 2] }, { index: 1, value: [1] }]),
          "vectors have different widths (2 and 1)"
        )
        assert.strictEqual(
          yield* invalid([{ index: 0, value: "AAAAAAAA" }, { index: 1, value: [1] }]),
          "vector 0 has 6 bytes, not a whole number of float32"
        )
        assert.strictEqual(yield* invalid([{ index: 0, value: "@@@@" }, { index: 1, value: [1] }]), "vector 0 is not valid base64")
        assert.strictEqual(yield* invalid([{ index: 0, value: [] }, { index: 1, value: [] }]), "vector 0 is empty")
        assert.strictEqual(
          yield* invalid([{ index: 0, value: VectorEncoding.toBase64([Number.NaN]) }, { index: 1, value: [1] }]),
          "vector 0 holds a value that is not a finite number"
        )
      }))

    it.effect("measures base64 vectors' width from their length, which the attempt checks against the width asked", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorEncoding.finish({ ...two, encodingFormat: "base64", dimensions: 3 }, [
          { index: 0, value: VectorEncoding.toBase64([1, 2]) },
          { index: 1, value: VectorEncoding.toBase64([3, 4]) }
        ])
        assert.deepStrictEqual(vectors.map((v) => VectorEncoding.widthOf(v.embedding)), [2, 2])
      }))

    it("reads a forwarded vector's first numbers only, and base64 as float32", () => {
      const located = VectorEncoding.locate(Buffer.from(`{"data":[{"embedding":[0.5,-0.25,1.5,2e-3]}]}`))!
      assert.deepStrictEqual(Array.from(VectorEncoding.readFloats(located.vectors[0]!, 2)), [0.5, -0.25])
      assert.deepStrictEqual(Array.from(VectorEncoding.readFloats(located.vectors[0]!)), [0.5, -0.25, 1.5, 2e-3])
      assert.deepStrictEqual(Array.from(VectorEncoding.readFloats(VectorEncoding.toBase64([1, 2, 3]), 2)), [1, 2])
      assert.strictEqual(Buffer.from(VectorEncoding.integerVector(Int8Array.from([-128, 0, 127])).json).toString(), "[-128,0,127]")
    })
  })
})
