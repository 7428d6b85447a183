import type * as EndpointParameters from "@switchyard/core/routing/EndpointParameters"
import * as Matryoshka from "@switchyard/core/vectors/Matryoshka"
import * as OutputDtype from "@switchyard/core/vectors/OutputDtype"
import * as Windows from "@switchyard/core/vectors/Windows"
import * as VectorEncoding from "../providers/VectorEncoding.ts"
import type { Split } from "./LongInputs.ts"

/**
 * The vectors of an answer, from what a provider returned to what the caller gets, in two steps
 * around the embeddings cache (which keeps what the first makes, so that a hit answers what a
 * miss would):
 *
 * 1. {@link gathered}: one vector per input item, at the answer's width: the windows of a
 *    chunked item averaged by their tokens and re-normalised, a Matryoshka vector cut to the width
 *    asked and re-normalised (each window cut first, as a provider that takes `dimensions` would
 *    answer them). A plain answer's vectors stay in the provider's bytes.
 * 2. {@link finished}: in the type and encoding asked: floats as they are (or base64 of
 *    float32), a type the provider made checked and written, a type the gateway makes quantized
 *    from the floats (`vectors/OutputDtype`).
 */

const asFloats = (vector: VectorEncoding.Vector, width: number | undefined): ArrayLike<number> => {
  const floats = VectorEncoding.readFloats(vector, width)
  return width === undefined ? floats : Matryoshka.cut(floats, width)
}

/**
 * The provider's vectors of one call, one per input item (see step 1). `windows` says where
 * each item's windows are when some item was split.
 */
export const gathered = (
  asked: EndpointParameters.Asked,
  windows: ReadonlyArray<Split> | undefined,
  embeddings: ReadonlyArray<VectorEncoding.Forwarded>
): ReadonlyArray<VectorEncoding.Forwarded> => {
  const width = asked.widthBy === "gateway" ? asked.answerWidth : undefined
  if (windows === undefined && width === undefined) return embeddings
  const byIndex = new Array<VectorEncoding.Vector>(embeddings.length)
  for (const e of embeddings) byIndex[e.index] = e.embedding
  const items = windows ?? byIndex.map((_, i) => ({ from: i, to: i + 1, weights: [1] }))
  return items.map((split, index) => {
    if (split.to - split.from === 1) {
      const vector = byIndex[split.from]!
      return { index, embedding: width === undefined ? vector : Array.from(asFloats(vector, width)) }
    }
    const parts = byIndex.slice(split.from, split.to).map((vector) => asFloats(vector, width))
    return { index, embedding: Array.from(Windows.weightedMean(parts, split.weights)) }
  })
}

// Written once as the answer's bytes.
const typed = (values: ArrayLike<number>, dtype: OutputDtype.QuantizedDtype, encoding: "float" | "base64"): VectorEncoding.Vector =>
  encoding === "base64"
    ? Buffer.from(OutputDtype.rawBytes(values, dtype)).toString("base64")
    : VectorEncoding.integerVector(values)

/**
 * Why a vector the provider made in a quantized type is not one of it (the count or range of
 * its numbers), or `undefined` when every one is: checked before the cache keeps them.
 */
export const nativeProblem = (
  asked: EndpointParameters.Asked,
  embeddings: ReadonlyArray<VectorEncoding.Forwarded>
): string | undefined => {
  const dtype = asked.outputDtype
  if (dtype === undefined) return undefined
  for (const e of embeddings) {
    const problem = OutputDtype.problemOf(Array.from(VectorEncoding.readFloats(e.embedding)), dtype, asked.width)
    if (problem !== undefined) return `vector ${e.index}: ${problem}`
  }
  return undefined
}

/** An answer's vectors in the type and encoding asked (see step 2). */
export const finished = (
  asked: EndpointParameters.Asked,
  embeddings: ReadonlyArray<VectorEncoding.Forwarded>
): ReadonlyArray<VectorEncoding.Forwarded> => {
  const { dtype, encoding } = asked
  if (dtype === "float") {
    return embeddings.map((e) => {
      const vector = e.embedding
      if (vector instanceof VectorEncoding.ForwardedVector) return { index: e.index, embedding: VectorEncoding.inEncoding(vector, encoding) }
      if (encoding === "base64") return typeof vector === "string" ? e : { index: e.index, embedding: VectorEncoding.toBase64(vector) }
      return typeof vector === "string" ? { index: e.index, embedding: VectorEncoding.fromBase64(vector) ?? [] } : e
    })
  }
  if (asked.dtypeBy === "provider") {
    return embeddings.map((e) => ({ index: e.index, embedding: typed(VectorEncoding.readFloats(e.embedding), dtype, encoding) }))
  }
  return embeddings.map((e) => ({
    index: e.index,
    embedding: typed(OutputDtype.fromFloats(VectorEncoding.readFloats(e.embedding), dtype), dtype, encoding)
  }))
}
