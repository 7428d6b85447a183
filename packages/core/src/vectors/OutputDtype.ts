/**
 * The types a vector can be answered in (`output_dtype`) and how the gateway makes each of them
 * from a float vector, when the provider does not make it natively.
 *
 * **Details**
 *
 * - `float`: the model's numbers (JSON numbers; base64 of little-endian float32).
 * - `int8` / `uint8`: one byte a dimension, by a scalar quantization the gateway calibrates once
 *   per model and width, never per request (see {@link int8Scale}): the vector is normalised to
 *   L2 = 1, each value `x` becomes `round(x · s)` clamped to -128..127 with
 *   `s = 127 · √width / 5` (the range ±5 / √width: five standard deviations of a component of a
 *   unit vector); `uint8` is that value plus 128. Every request of a model at a width gets the
 *   same scale, so the vectors of one index stay comparable whoever served them.
 * - `binary` / `ubinary`: one bit a dimension, 1 when the value is positive, the first dimension
 *   in the highest bit of the first byte, `⌈width / 8⌉` bytes (a width that is not a multiple of 8
 *   leaves the last byte's low bits 0). `ubinary` writes each byte as 0..255, `binary` as a signed
 *   number with an offset of -128 (byte − 128), as Cohere and Voyage document them.
 * - Base64 (`encoding_format: "base64"`) is the raw bytes: float32 little-endian for `float`, one
 *   byte per number for `int8` (two's complement) and `uint8`, the packed bits themselves for
 *   `binary` and `ubinary` (the offset only says how JSON writes a byte as a number).
 *
 * @since 0.12.0
 */
import { Schema } from "effect"
import { l2Norm } from "./Matryoshka.ts"

/**
 * @since 0.12.0
 */
export const OutputDtype = Schema.Literals(["float", "int8", "uint8", "binary", "ubinary"])

/**
 * @since 0.12.0
 */
export type OutputDtype = typeof OutputDtype.Type

/**
 * The types other than `float`: what a provider may make natively (an endpoint's `output_dtypes`).
 *
 * @since 0.12.0
 */
export const QuantizedDtype = Schema.Literals(["int8", "uint8", "binary", "ubinary"])

/**
 * @since 0.12.0
 */
export type QuantizedDtype = typeof QuantizedDtype.Type

/**
 * Every type, in the order listings show them.
 *
 * @since 0.12.0
 */
export const all: ReadonlyArray<OutputDtype> = ["float", "int8", "uint8", "binary", "ubinary"]

/**
 * Whether the type packs one bit a dimension.
 *
 * @since 0.12.0
 */
const isBinary = (dtype: OutputDtype): dtype is "binary" | "ubinary" => dtype === "binary" || dtype === "ubinary"

/**
 * How many numbers a vector of `width` dimensions holds in a type: the width, or its bytes for
 * the packed types.
 *
 * @since 0.12.0
 */
export const lengthOf = (width: number, dtype: OutputDtype): number => isBinary(dtype) ? Math.ceil(width / 8) : width

/**
 * The int8 calibration of a model at a width: the factor a value of a unit vector is multiplied
 * by before it is rounded (`127 · √width / 5`). Only the width decides it, so it is the same for
 * every request, replica and day.
 *
 * @since 0.12.0
 */
export const int8Scale = (width: number): number => (127 * Math.sqrt(width)) / 5

/**
 * A float vector as `int8` (or `uint8`: the same plus 128), by the calibrated scalar quantization
 * of {@link int8Scale}, after normalising it to L2 = 1.
 *
 * @since 0.12.0
 */
export const quantize = (vector: ArrayLike<number>, dtype: "int8" | "uint8"): Int8Array | Uint8Array => {
  const norm = l2Norm(vector)
  const factor = norm === 0 ? 0 : int8Scale(vector.length) / norm
  const out = dtype === "int8" ? new Int8Array(vector.length) : new Uint8Array(vector.length)
  const offset = dtype === "int8" ? 0 : 128
  for (let i = 0; i < vector.length; i++) {
    let q = Math.round(vector[i]! * factor)
    q = q > 127 ? 127 : q < -128 ? -128 : q
    out[i] = q + offset
  }
  return out
}

/**
 * The packed bits of a float vector (`ubinary`'s bytes): bit 7 of byte 0 is dimension 0, set
 * when the value is positive.
 *
 * @since 0.12.0
 */
export const packBits = (vector: ArrayLike<number>): Uint8Array => {
  const out = new Uint8Array(Math.ceil(vector.length / 8))
  for (let i = 0; i < vector.length; i++) {
    if (vector[i]! > 0) out[i >> 3] = out[i >> 3]! | (0x80 >> (i & 7))
  }
  return out
}

/**
 * A float vector in a quantized type, as the numbers JSON writes (`binary`: each packed byte
 * minus 128).
 *
 * @since 0.12.0
 */
export const fromFloats = (vector: ArrayLike<number>, dtype: QuantizedDtype): Int8Array | Uint8Array => {
  switch (dtype) {
    case "int8":
    case "uint8":
      return quantize(vector, dtype)
    case "ubinary":
      return packBits(vector)
    case "binary":
      return asSigned(packBits(vector))
  }
}

/**
 * Packed bytes written as `binary`'s signed numbers (byte − 128).
 *
 * @since 0.12.0
 */
const asSigned = (bytes: Uint8Array): Int8Array => {
  const out = new Int8Array(bytes.length)
  for (let i = 0; i < bytes.length; i++) out[i] = bytes[i]! - 128
  return out
}

/**
 * The raw bytes base64 carries of a vector already in its type's numbers (see the module notes):
 * int8 as two's complement, uint8 as it is, binary back to its packed bits.
 *
 * @since 0.12.0
 */
export const rawBytes = (values: ArrayLike<number>, dtype: QuantizedDtype): Uint8Array => {
  const out = new Uint8Array(values.length)
  const offset = dtype === "binary" ? 128 : 0
  for (let i = 0; i < values.length; i++) out[i] = (values[i]! + offset) & 0xff
  return out
}

const ranges: Record<QuantizedDtype, readonly [number, number]> = {
  int8: [-128, 127],
  binary: [-128, 127],
  uint8: [0, 255],
  ubinary: [0, 255]
}

/**
 * Why a provider's native vector is not one of its type at a width, or `undefined` when it is:
 * the right count of whole numbers in the type's range.
 *
 * @since 0.12.0
 */
export const problemOf = (values: ReadonlyArray<unknown>, dtype: QuantizedDtype, width: number): string | undefined => {
  const length = lengthOf(width, dtype)
  if (values.length !== length) return `expected ${length} ${dtype} values for ${width} dimensions, got ${values.length}`
  const [low, high] = ranges[dtype]
  for (const value of values) {
    if (typeof value !== "number" || !Number.isInteger(value) || value < low || value > high) {
      return `a ${dtype} value must be a whole number from ${low} to ${high}, got ${JSON.stringify(value)}`
    }
  }
  return undefined
}
