import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Matryoshka from "../../src/vectors/Matryoshka.ts"
import * as OutputDtype from "../../src/vectors/OutputDtype.ts"
import * as Windows from "../../src/vectors/Windows.ts"

const finite = fc.double({ min: -1, max: 1, noNaN: true, noDefaultInfinity: true })
const vectors = fc.array(finite, { minLength: 1, maxLength: 300 })

// The reference packing, written the slow way: a string of bits, then each group of 8 read as a byte.
const referencePacking = (vector: ReadonlyArray<number>): Array<number> => {
  const bits = vector.map((x) => (x > 0 ? "1" : "0")).join("").padEnd(Math.ceil(vector.length / 8) * 8, "0")
  return Array.from({ length: bits.length / 8 }, (_, i) => Number.parseInt(bits.slice(i * 8, i * 8 + 8), 2))
}

// Math.hypot: no underflow or overflow in the squares (a vector of values near 1e-162 has a norm).
const norm = (v: ArrayLike<number>) => Math.hypot(...Array.from(v))

describe("OutputDtype", () => {
  it("ubinary is the reference packing of the same floats, binary the same bytes minus 128", () => {
    fc.assert(
      fc.property(vectors, (vector) => {
        const reference = referencePacking(vector)
        assert.deepStrictEqual(Array.from(OutputDtype.fromFloats(vector, "ubinary")), reference)
        assert.deepStrictEqual(Array.from(OutputDtype.fromFloats(vector, "binary")), reference.map((b) => b - 128))
        // Base64's raw bytes are the packed bits for both.
        assert.deepStrictEqual(Array.from(OutputDtype.rawBytes(OutputDtype.fromFloats(vector, "binary"), "binary")), reference)
        assert.deepStrictEqual(Array.from(OutputDtype.rawBytes(OutputDtype.fromFloats(vector, "ubinary"), "ubinary")), reference)
      }),
      { numRuns: 200 }
    )
  })

  it("the first dimension is the highest bit, positive means 1, zero means 0", () => {
    assert.deepStrictEqual(Array.from(OutputDtype.packBits([0.5, -0.5, 0, 0, 0, 0, 0, 0.1, 0.2])), [0b10000001, 0b10000000])
  })

  it("int8 is the calibrated quantization of the unit vector, uint8 the same plus 128, whatever the vector's length", () => {
    fc.assert(
      fc.property(vectors.filter((v) => norm(v) > 1e-9), fc.double({ min: 0.01, max: 100, noNaN: true }), (vector, scale) => {
        const int8 = OutputDtype.quantize(vector, "int8")
        const s = OutputDtype.int8Scale(vector.length)
        const n = norm(vector)
        vector.forEach((x, i) => {
          assert.strictEqual(int8[i], Math.max(-128, Math.min(127, Math.round((x / n) * s))))
        })
        assert.deepStrictEqual(Array.from(OutputDtype.quantize(vector, "uint8")), Array.from(int8).map((q) => q + 128))
        // The calibration depends on the width only: a scaled vector quantizes the same (up to rounding ties).
        const scaled = OutputDtype.quantize(vector.map((x) => x * scale), "int8")
        assert.isTrue(Array.from(scaled).every((q, i) => Math.abs(q - int8[i]!) <= 1))
      }),
      { numRuns: 200 }
    )
  })

  it("checks a provider's quantized vector: count and range", () => {
    assert.isUndefined(OutputDtype.problemOf([1, -2, 3], "int8", 3))
    assert.include(OutputDtype.problemOf([1, -2], "int8", 3)!, "expected 3 int8 values")
    assert.include(OutputDtype.problemOf([128, 0, 0], "int8", 3)!, "from -128 to 127")
    assert.include(OutputDtype.problemOf([1.5], "binary", 8)!, "whole number")
    assert.isUndefined(OutputDtype.problemOf([255, 0], "ubinary", 16))
  })

  // Clustered unit vectors (fixed seed): the gateway's int8 dot product keeps the float top-10.
  it("int8 keeps the float top-10 neighbours of clustered vectors (a small version of the bench's)", () => {
    let seed = 7
    const rand = () => {
      seed = (seed + 0x6d2b79f5) >>> 0
      let t = seed
      t = Math.imul(t ^ (t >>> 15), t | 1)
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296
    }
    const gauss = () => Math.sqrt(-2 * Math.log(Math.max(rand(), 1e-12))) * Math.cos(2 * Math.PI * rand())
    const unit = (d: number) => {
      const x = Array.from({ length: d }, gauss)
      const n = norm(x)
      return x.map((v) => v / n)
    }
    const [count, width, clusters] = [300, 256, 10]
    const centers = Array.from({ length: clusters }, () => unit(width))
    const data = Array.from({ length: count }, (_, i) => {
      const noise = unit(width)
      const mixed = centers[i % clusters]!.map((c, j) => Math.sqrt(0.55) * c + Math.sqrt(0.45) * noise[j]!)
      const n = norm(mixed)
      return mixed.map((v) => v / n)
    })
    const int8 = data.map((v) => OutputDtype.quantize(v, "int8"))
    const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
      let s = 0
      for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
      return s
    }
    const top = (q: number, score: (i: number) => number) =>
      Array.from({ length: count }, (_, i) => i).filter((i) => i !== q).sort((a, b) => score(b) - score(a) || a - b).slice(0, 10)
    let kept = 0
    for (let q = 0; q < 60; q++) {
      const exact = new Set(top(q, (i) => dot(data[q]!, data[i]!)))
      kept += top(q, (i) => dot(int8[q]!, int8[i]!)).filter((i) => exact.has(i)).length
    }
    assert.isAtLeast(kept / 600, 0.95)
  })
})

describe("Matryoshka", () => {
  it("a cut is the first n values re-normalised, with norm 1", () => {
    fc.assert(
      fc.property(vectors.filter((v) => norm(v) > 1e-6), fc.integer({ min: 1, max: 300 }), (vector, n) => {
        const cut = Matryoshka.cut(vector, n)
        const first = vector.slice(0, n)
        const length = norm(first)
        assert.strictEqual(cut.length, first.length)
        if (length === 0) return
        first.forEach((x, i) => {
          assert.approximately(cut[i]!, x / length, 1e-6)
        })
        assert.approximately(norm(cut), 1, 1e-6)
      }),
      { numRuns: 200 }
    )
  })

  it("a vector of values too small or too large to square still has norm 1 after the cut (values near 1e-162 and 1e200)", () => {
    for (const vector of [[1.5717277847026288e-162, -9.999999889979436e-7], [1.5717277847026288e-162, 3e-163], [3e200, -4e200]]) {
      const cut = Matryoshka.cut(vector, vector[1]! === -9.999999889979436e-7 ? 1 : 2)
      assert.approximately(norm(cut), 1, 1e-12)
      assert.approximately(Matryoshka.l2Norm(vector), norm(vector), norm(vector) * 1e-12)
    }
  })

  it("allows a listed width, or any width up to its own", () => {
    assert.isTrue(Matryoshka.allows({ matryoshka: [256, 512], dimensions: 1024 }, 512))
    assert.isFalse(Matryoshka.allows({ matryoshka: [256, 512], dimensions: 1024 }, 300))
    assert.isTrue(Matryoshka.allows({ matryoshka: true, dimensions: 1024 }, 300))
    assert.isFalse(Matryoshka.allows({ matryoshka: true, dimensions: 1024 }, 1025))
    assert.strictEqual(Matryoshka.describeWidths({ matryoshka: [512, 256], dimensions: 1024 }), "256, 512")
  })
})

describe("Windows", () => {
  it("splits a long input into consecutive windows within the limit, covering every token", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20_000 }), fc.integer({ min: 16, max: 9000 }), (tokens, max) => {
        const windows = Windows.split(tokens, max)
        assert.strictEqual(windows.length, Math.ceil(tokens / max))
        assert.strictEqual(windows[0]!.start, 0)
        assert.strictEqual(windows.at(-1)!.end, tokens)
        windows.forEach((w, i) => {
          assert.isAtMost(w.end - w.start, max)
          assert.isAtLeast(w.end - w.start, 1)
          if (i > 0) assert.strictEqual(w.start, windows[i - 1]!.end)
        })
      }),
      { numRuns: 300 }
    )
  })

  it("the mean of windows is weighted by their tokens and re-normalised", () => {
    const mean = Windows.weightedMean([[1, 0], [0, 1]], [3, 1])
    assert.approximately(mean[0]!, 3 / Math.sqrt(10), 1e-12)
    assert.approximately(mean[1]!, 1 / Math.sqrt(10), 1e-12)
  })
})
