import { EmbeddingProvider } from "@switchyard/core"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect, Schema } from "effect"

// One guard over the whole array: per-element schema checks cost ~10x on million-float answers.
export const FloatVector = Schema.declare(
  (u: unknown): u is ReadonlyArray<number> =>
    Array.isArray(u) && u.every((x) => typeof x === "number" && Number.isFinite(x)),
  { expected: "an array of finite numbers" }
)

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/u

export const toBase64 = (vector: ReadonlyArray<number>): string => {
  const view = new DataView(new ArrayBuffer(vector.length * 4))
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i]!, true)
  return Buffer.from(view.buffer).toString("base64")
}

export const byteLength = (encoded: string): number | undefined => {
  if (encoded.length % 4 !== 0 || !base64Pattern.test(encoded)) return undefined
  const padding = encoded.endsWith("==") ? 2 : encoded.endsWith("=") ? 1 : 0
  return (encoded.length / 4) * 3 - padding
}

export const fromBase64 = (encoded: string): ReadonlyArray<number> | undefined => {
  const length = byteLength(encoded)
  if (length === undefined || length % 4 !== 0) return undefined
  const bytes = Buffer.from(encoded, "base64")
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const vector = new Array<number>(length / 4)
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true)
  return vector
}

// A float32 is NaN or infinite exactly when its eight exponent bits are all set.
const allFinite32 = (bytes: Uint8Array): boolean => {
  for (let i = 0; i + 3 < bytes.length; i += 4) {
    if ((bytes[i + 3]! & 0x7f) === 0x7f && (bytes[i + 2]! & 0x80) === 0x80) return false
  }
  return true
}

export interface RawVector<V extends Vector = ReadonlyArray<number> | string> {
  readonly index: number
  readonly value: V
}

const invalid = UpstreamError.invalidResponse

// Upstreams answer in whatever encoding they support; the client gets the one it asked for. The
// width asked is checked once, by the attempt (`UpstreamAttempt.ts`), for every adapter.
export const finishForwarded = Effect.fnUntraced(function*(
  request: EmbeddingProvider.UpstreamRequest,
  raw: ReadonlyArray<RawVector<Vector>>
) {
  const expected = EmbeddingProvider.inputCount(request.input)
  if (raw.length !== expected) {
    return yield* invalid(`expected ${expected} vector${expected === 1 ? "" : "s"}, got ${raw.length}`)
  }
  const ordered = new Array<RawVector<Vector> | undefined>(expected)
  for (const vector of raw) {
    if (!Number.isInteger(vector.index) || vector.index < 0 || vector.index >= expected) {
      return yield* invalid(`vector index ${vector.index} is out of range`)
    }
    if (ordered[vector.index] !== undefined) {
      return yield* invalid(`vector index ${vector.index} appears twice`)
    }
    ordered[vector.index] = vector
  }
  let width: number | undefined
  for (const vector of ordered as ReadonlyArray<RawVector<Vector>>) {
    let got: number
    if (vector.value instanceof ForwardedVector) {
      got = vector.value.width
    } else if (typeof vector.value === "string") {
      const bytes = byteLength(vector.value)
      if (bytes === undefined) return yield* invalid(`vector ${vector.index} is not valid base64`)
      if (bytes % 4 !== 0) {
        return yield* invalid(`vector ${vector.index} has ${bytes} bytes, not a whole number of float32`)
      }
      got = bytes / 4
    } else {
      got = vector.value.length
    }
    if (got === 0) return yield* invalid(`vector ${vector.index} is empty`)
    if (width === undefined) width = got
    else if (got !== width) {
      return yield* invalid(`vectors have different widths (${width} and ${got})`)
    }
  }
  const embeddings: Array<Forwarded> = []
  for (const vector of ordered as ReadonlyArray<RawVector<Vector>>) {
    // A forwarded vector already in the asked encoding was checked when it was located.
    if (vector.value instanceof ForwardedVector && vector.value.encoding === request.encodingFormat) {
      embeddings.push({ index: vector.index, embedding: vector.value })
      continue
    }
    const value = vector.value instanceof ForwardedVector ? vector.value.value() : vector.value
    if (request.encodingFormat === "base64") {
      const encoded = typeof value === "string" ? value : toBase64(value)
      if (!allFinite32(Buffer.from(encoded, "base64"))) {
        return yield* invalid(`vector ${vector.index} holds a value that is not a finite float32`)
      }
      embeddings.push({ index: vector.index, embedding: encoded })
    } else if (typeof value === "string") {
      const decoded = fromBase64(value)
      if (decoded === undefined) return yield* invalid(`vector ${vector.index} is not valid base64`)
      if (!decoded.every(Number.isFinite)) {
        return yield* invalid(`vector ${vector.index} holds a value that is not a finite number`)
      }
      embeddings.push({ index: vector.index, embedding: decoded })
    } else {
      embeddings.push({ index: vector.index, embedding: value })
    }
  }
  return embeddings
})

/**
 * {@link finishForwarded} for plain vectors: the result holds no forwarded vector when the input
 * held none.
 */
export const finish = finishForwarded as (
  request: EmbeddingProvider.UpstreamRequest,
  raw: ReadonlyArray<RawVector>
) => Effect.Effect<Array<EmbeddingProvider.Embedding>, UpstreamError.UpstreamError>

/**
 * A vector the gateway forwards as the upstream wrote it: the exact JSON text of its value (a
 * number array, or a quoted base64 string), already checked to be well formed, finite and
 * `width` wide. The response splices these bytes in; they are never parsed into numbers.
 */
export class ForwardedVector {
  readonly json: Uint8Array
  readonly width: number
  readonly encoding: "float" | "base64"

  constructor(json: Uint8Array, width: number, encoding: "float" | "base64") {
    this.json = json
    this.width = width
    this.encoding = encoding
  }

  /** The vector as the port's plain value: numbers, or the base64 text. */
  value(): ReadonlyArray<number> | string {
    const buffer = Buffer.from(this.json.buffer, this.json.byteOffset, this.json.byteLength)
    return this.encoding === "base64"
      ? buffer.toString("latin1", 1, buffer.length - 1)
      : JSON.parse(buffer.toString("latin1")) as ReadonlyArray<number>
  }
}

/** A vector in any of the forms an adapter hands back. */
export type Vector = ReadonlyArray<number> | string | ForwardedVector

/** One vector of a result, possibly still in the upstream's own bytes. */
export interface Forwarded {
  readonly index: number
  readonly embedding: Vector
}

/**
 * The first `limit` numbers of a vector (all of them by default) as floats: a forwarded JSON
 * array is parsed only up to them, base64 read as little-endian float32.
 */
export const readFloats = (vector: Vector, limit = Number.MAX_SAFE_INTEGER): ArrayLike<number> => {
  if (vector instanceof ForwardedVector) {
    if (vector.encoding === "base64") return float32Of(vector.value() as string, limit)
    const json = vector.json
    if (limit >= vector.width) return JSON.parse(Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString("latin1")) as ReadonlyArray<number>
    // The `limit`-th comma ends the numbers kept: the rest is never read.
    let commas = 0
    let i = 1
    for (; i < json.length; i++) if (json[i] === 0x2c && ++commas === limit) break
    return JSON.parse(`${Buffer.from(json.buffer, json.byteOffset + 0, i).toString("latin1")}]`) as ReadonlyArray<number>
  }
  if (typeof vector === "string") return float32Of(vector, limit)
  return limit >= vector.length ? vector : vector.slice(0, limit)
}

const float32Of = (encoded: string, limit: number): Float32Array => {
  const bytes = Buffer.from(encoded, "base64")
  const count = Math.min(limit, Math.floor(bytes.length / 4))
  const out = new Float32Array(count)
  for (let i = 0; i < count; i++) out[i] = bytes.readFloatLE(i * 4)
  return out
}

// The JSON text of each byte-sized integer (-128..255), written by copying rather than formatting.
const integerText: ReadonlyArray<Uint8Array> = Array.from({ length: 384 }, (_, i) => Buffer.from(String(i - 128), "latin1"))

/**
 * A vector of byte-sized integers (a quantized type's numbers) as a forwarded JSON array, written
 * once, byte by byte.
 */
export const integerVector = (values: ArrayLike<number>): ForwardedVector => {
  const out = Buffer.allocUnsafe(values.length * 5 + 2)
  let at = 0
  out[at++] = 0x5b
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out[at++] = 0x2c
    const text = integerText[values[i]! + 128]!
    out.set(text, at)
    at += text.length
  }
  out[at++] = 0x5d
  return new ForwardedVector(out.subarray(0, at), values.length, "float")
}

export const widthOf = (vector: Vector): number =>
  vector instanceof ForwardedVector
    ? vector.width
    : typeof vector === "string"
    ? Buffer.byteLength(vector, "base64") / 4
    : vector.length

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39

// A token that may exceed the float64 range (1e400 reads as Infinity) is read to be sure.
const finiteToken = (bytes: Buffer, start: number, end: number) => Number.isFinite(Number(bytes.toString("latin1", start, end)))

/**
 * Reads a JSON array of numbers starting at `start` (the `[`), strictly by the JSON grammar.
 * Returns the index just after the `]` and the count, or `undefined` for anything else.
 */
const scanFloats = (bytes: Buffer, start: number): { readonly end: number; readonly width: number } | undefined => {
  let i = start + 1
  while (isSpace(bytes[i])) i++
  if (bytes[i] === 0x5d) return { end: i + 1, width: 0 }
  let width = 0
  for (;;) {
    const token = i
    if (bytes[i] === 0x2d) i++
    const first = bytes[i]
    if (first === 0x30) i++
    else if (first !== undefined && first >= 0x31 && first <= 0x39) {
      i++
      while (isDigit(bytes[i])) i++
    } else return undefined
    const integerDigits = i - token
    if (bytes[i] === 0x2e) {
      i++
      if (!isDigit(bytes[i])) return undefined
      while (isDigit(bytes[i])) i++
    }
    const e = bytes[i]
    if (e === 0x65 || e === 0x45) {
      i++
      const sign = bytes[i]
      if (sign === 0x2b || sign === 0x2d) i++
      if (!isDigit(bytes[i])) return undefined
      let exponent = 0
      while (isDigit(bytes[i])) {
        if (exponent < 100_000) exponent = exponent * 10 + bytes[i]! - 0x30
        i++
      }
      if (sign !== 0x2d && integerDigits + exponent > 300 && !finiteToken(bytes, token, i)) return undefined
    } else if (integerDigits > 300 && !finiteToken(bytes, token, i)) return undefined
    width++
    while (isSpace(bytes[i])) i++
    const next = bytes[i]
    if (next === 0x2c) {
      i++
      while (isSpace(bytes[i])) i++
    } else if (next === 0x5d) return { end: i + 1, width }
    else return undefined
  }
}

const base64Alphabet = new Uint8Array(256)
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") base64Alphabet[c.charCodeAt(0)] = 1

/**
 * Reads a JSON string of base64 starting at `start` (the `"`): alphabet, padding and length are
 * checked, and the decoded bytes must be whole float32 values, none NaN or infinite.
 */
const scanBase64 = (bytes: Buffer, start: number): { readonly end: number; readonly width: number } | undefined => {
  let i = start + 1
  while (base64Alphabet[bytes[i] ?? 0] === 1) i++
  let padding = 0
  while (bytes[i] === 0x3d && padding < 2) {
    i++
    padding++
  }
  if (bytes[i] !== 0x22) return undefined
  const length = i - start - 1
  if (length % 4 !== 0) return undefined
  const decoded = (length / 4) * 3 - padding
  if (decoded % 4 !== 0) return undefined
  if (!allFinite32(Buffer.from(bytes.toString("latin1", start + 1, i), "base64"))) return undefined
  return { end: i + 1, width: decoded / 4 }
}

const embeddingKey = Buffer.from("\"embedding\"")

/**
 * An upstream body with its vectors taken out: `skeleton` is the rest of the document, parsed,
 * where every `embedding` value became its position in `vectors`.
 */
export interface Located {
  readonly skeleton: unknown
  readonly vectors: ReadonlyArray<ForwardedVector>
}

/**
 * Finds every `"embedding"` value of an OpenAI-style JSON body without parsing the vectors.
 *
 * **Details**
 *
 * Each value must be a flat array of JSON numbers or a plain base64 string; anything else (an
 * escape, a nested value, a malformed number, a value too large for a float) gives `undefined`,
 * and the caller reads the body the ordinary way, which reports the fault exactly. In a valid
 * JSON document `"embedding"` followed by `:` can only be a key (a quote inside a string is
 * escaped, so the closing quote would end the string), and the rest of the document, with each value replaced by a number, is valid JSON
 * exactly when the whole body is. A skeleton holding any backslash is refused too, so no escaped
 * key can stand for `embedding`.
 */
export const locate = (body: Uint8Array): Located | undefined => {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  const parts: Array<string> = []
  const vectors: Array<ForwardedVector> = []
  let copied = 0
  let from = 0
  for (;;) {
    const at = bytes.indexOf(embeddingKey, from)
    if (at < 0) break
    let i = at + embeddingKey.length
    while (isSpace(bytes[i])) i++
    if (bytes[i] !== 0x3a) {
      // A string value ("object": "embedding"), or a fault the skeleton's parse will report.
      from = at + embeddingKey.length - 1
      continue
    }
    i++
    while (isSpace(bytes[i])) i++
    const open = bytes[i]
    const encoding = open === 0x5b ? "float" : open === 0x22 ? "base64" : undefined
    if (encoding === undefined) return undefined
    const scanned = encoding === "float" ? scanFloats(bytes, i) : scanBase64(bytes, i)
    if (scanned === undefined) return undefined
    parts.push(bytes.toString("utf8", copied, i), String(vectors.length))
    vectors.push(new ForwardedVector(bytes.subarray(i, scanned.end), scanned.width, encoding))
    copied = from = scanned.end
  }
  parts.push(bytes.toString("utf8", copied))
  const text = parts.join("")
  if (text.includes("\\")) return undefined
  try {
    return { skeleton: JSON.parse(text), vectors }
  } catch {
    return undefined
  }
}

/**
 * A vector as the embeddings cache's store keeps it: the upstream's own text, a JSON number array
 * or base64 of little-endian float32, so a cached vector reads back bit for bit as it arrived.
 */
export interface Stored {
  readonly encoding: "float" | "base64"
  readonly text: string
  readonly width: number
}

// Bytes of their own (not a view of a larger buffer, not a slab of Node's pool), so a kept vector
// holds no more memory than its own bytes.
const ownBytes = (length: number): Buffer => Buffer.allocUnsafeSlow(length)

const ownLatin1 = (text: string, quoted: boolean): Buffer => {
  const bytes = ownBytes(text.length + (quoted ? 2 : 0))
  if (quoted) {
    bytes[0] = 0x22
    bytes[bytes.length - 1] = 0x22
  }
  bytes.write(text, quoted ? 1 : 0, "latin1")
  return bytes
}

/**
 * A vector as the embeddings cache keeps it in memory: its JSON bytes in the upstream's own
 * encoding, copied out of the upstream's body, ready to be spliced into any answer that asks for
 * that encoding without another copy.
 */
export const keep = (vector: Vector): ForwardedVector => {
  if (vector instanceof ForwardedVector) {
    const bytes = ownBytes(vector.json.byteLength)
    bytes.set(vector.json)
    return new ForwardedVector(bytes, vector.width, vector.encoding)
  }
  return typeof vector === "string"
    ? new ForwardedVector(ownLatin1(vector, true), widthOf(vector), "base64")
    : new ForwardedVector(ownLatin1(JSON.stringify(vector), false), vector.length, "float")
}

/** A kept vector as its store holds it. */
export const toStored = (kept: ForwardedVector): Stored => {
  const bytes = Buffer.from(kept.json.buffer, kept.json.byteOffset, kept.json.byteLength)
  return kept.encoding === "base64"
    ? { encoding: "base64", text: bytes.toString("latin1", 1, bytes.length - 1), width: kept.width }
    : { encoding: "float", text: bytes.toString("latin1"), width: kept.width }
}

/** A stored vector, kept. */
export const fromStored = (stored: Stored): ForwardedVector =>
  new ForwardedVector(ownLatin1(stored.text, stored.encoding === "base64"), stored.width, stored.encoding)

/** The bytes a kept vector takes as stored (the base64 text without its quotes). */
export const storedBytes = (kept: ForwardedVector): number => kept.json.byteLength - (kept.encoding === "base64" ? 2 : 0)

/**
 * A kept vector in the encoding a request asked for: the kept bytes themselves when the encodings
 * agree; otherwise the same float32 values in the other encoding.
 */
export const inEncoding = (kept: ForwardedVector, encoding: "float" | "base64"): Vector => {
  if (kept.encoding === encoding) return kept
  const value = kept.value()
  return encoding === "base64"
    ? toBase64(value as ReadonlyArray<number>)
    : fromBase64(value as string) ?? []
}
