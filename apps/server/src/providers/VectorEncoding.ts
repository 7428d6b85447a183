import { EmbeddingProvider } from "@switchyard/core"
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
export const allFinite32 = (bytes: Uint8Array): boolean => {
  for (let i = 0; i + 3 < bytes.length; i += 4) {
    if ((bytes[i + 3]! & 0x7f) === 0x7f && (bytes[i + 2]! & 0x80) === 0x80) return false
  }
  return true
}

export interface RawVector {
  readonly index: number
  readonly value: ReadonlyArray<number> | string
}

const invalid = (adapter: string, detail: string) =>
  new EmbeddingProvider.UpstreamError({ adapter, reason: EmbeddingProvider.InvalidResponse.make({ detail }) })

// Upstreams answer in whatever encoding they support; the client gets the one it asked for.
export const finish = Effect.fnUntraced(function*(
  adapter: string,
  request: EmbeddingProvider.UpstreamRequest,
  raw: ReadonlyArray<RawVector>
) {
  const expected = EmbeddingProvider.inputCount(request.input)
  if (raw.length !== expected) {
    return yield* invalid(adapter, `expected ${expected} vector${expected === 1 ? "" : "s"}, got ${raw.length}`)
  }
  const ordered = new Array<RawVector | undefined>(expected)
  for (const vector of raw) {
    if (!Number.isInteger(vector.index) || vector.index < 0 || vector.index >= expected) {
      return yield* invalid(adapter, `vector index ${vector.index} is out of range`)
    }
    if (ordered[vector.index] !== undefined) {
      return yield* invalid(adapter, `vector index ${vector.index} appears twice`)
    }
    ordered[vector.index] = vector
  }
  let width: number | undefined
  for (const vector of ordered as ReadonlyArray<RawVector>) {
    let got: number
    if (typeof vector.value === "string") {
      const bytes = byteLength(vector.value)
      if (bytes === undefined) return yield* invalid(adapter, `vector ${vector.index} is not valid base64`)
      if (bytes % 4 !== 0) {
        return yield* invalid(adapter, `vector ${vector.index} has ${bytes} bytes, not a whole number of float32`)
      }
      got = bytes / 4
    } else {
      got = vector.value.length
    }
    if (got === 0) return yield* invalid(adapter, `vector ${vector.index} is empty`)
    if (width === undefined) width = got
    else if (got !== width) {
      return yield* invalid(adapter, `vectors have different widths (${width} and ${got})`)
    }
  }
  if (request.dimensions !== undefined && width !== undefined && width !== request.dimensions) {
    return yield* new EmbeddingProvider.UpstreamError({
      adapter,
      reason: EmbeddingProvider.WidthMismatch.make({ expected: request.dimensions, got: width })
    })
  }
  const embeddings: Array<EmbeddingProvider.Embedding> = []
  for (const vector of ordered as ReadonlyArray<RawVector>) {
    const value = vector.value
    if (request.encodingFormat === "base64") {
      const encoded = typeof value === "string" ? value : toBase64(value)
      if (!allFinite32(Buffer.from(encoded, "base64"))) {
        return yield* invalid(adapter, `vector ${vector.index} holds a value that is not a finite float32`)
      }
      embeddings.push({ index: vector.index, embedding: encoded })
    } else if (typeof value === "string") {
      const decoded = fromBase64(value)
      if (decoded === undefined) return yield* invalid(adapter, `vector ${vector.index} is not valid base64`)
      if (!decoded.every(Number.isFinite)) {
        return yield* invalid(adapter, `vector ${vector.index} holds a value that is not a finite number`)
      }
      embeddings.push({ index: vector.index, embedding: decoded })
    } else {
      embeddings.push({ index: vector.index, embedding: value })
    }
  }
  return embeddings
})
