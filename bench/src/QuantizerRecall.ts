/**
 * Issue 60's quantizer figure, a pure computation (no process, no load): on 2,000 generated unit
 * vectors of 1,024 dimensions in 50 clusters (fixed seed; two vectors of one cluster have a cosine
 * of about 0.55), how many of each query's float top-10 neighbours (by dot product) the gateway's
 * int8 vectors keep (by their integer dot product), and the same for binary vectors by Hamming
 * distance. The gateway's own quantization (`packages/core/src/vectors/OutputDtype.ts`) is measured.
 */
import * as OutputDtype from "../../packages/core/src/vectors/OutputDtype.ts"

export interface Recall {
  readonly vectors: number
  readonly width: number
  readonly clusters: number
  readonly queries: number
  /** The mean cosine of two vectors of one cluster, as generated. */
  readonly withinCluster: number
  /** The share of the float top-10 the int8 top-10 holds. */
  readonly int8: number
  /** The share of the float top-10 the binary (Hamming) top-10 holds. */
  readonly binary: number
}

const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) >>> 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const top10 = (count: number, query: number, score: (i: number) => number): Array<number> => {
  const scored: Array<readonly [number, number]> = []
  for (let i = 0; i < count; i++) if (i !== query) scored.push([score(i), i])
  scored.sort((a, b) => b[0] - a[0] || a[1] - b[1])
  return scored.slice(0, 10).map(([, i]) => i)
}

export const measure = (options: { readonly vectors?: number; readonly width?: number; readonly clusters?: number; readonly queries?: number; readonly seed?: number } = {}): Recall => {
  const count = options.vectors ?? 2000
  const width = options.width ?? 1024
  const clusters = options.clusters ?? 50
  const queries = options.queries ?? 200
  const random = mulberry32(options.seed ?? 42)
  const gauss = () => Math.sqrt(-2 * Math.log(Math.max(random(), 1e-12))) * Math.cos(2 * Math.PI * random())
  const unit = (): Float64Array => {
    const x = new Float64Array(width)
    let sum = 0
    for (let i = 0; i < width; i++) {
      x[i] = gauss()
      sum += x[i]! * x[i]!
    }
    const norm = Math.sqrt(sum)
    for (let i = 0; i < width; i++) x[i] = x[i]! / norm
    return x
  }
  // A member is √0.55 of its cluster's centre and √0.45 of noise, re-normalised.
  const centres = Array.from({ length: clusters }, unit)
  const data = Array.from({ length: count }, (_, k) => {
    const centre = centres[k % clusters]!
    const noise = unit()
    const x = new Float64Array(width)
    let sum = 0
    for (let i = 0; i < width; i++) {
      x[i] = Math.sqrt(0.55) * centre[i]! + Math.sqrt(0.45) * noise[i]!
      sum += x[i]! * x[i]!
    }
    const norm = Math.sqrt(sum)
    for (let i = 0; i < width; i++) x[i] = x[i]! / norm
    return x
  })
  const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
    let s = 0
    for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
    return s
  }
  const int8 = data.map((v) => OutputDtype.quantize(v, "int8"))
  const bits = data.map((v) => OutputDtype.packBits(v))
  const ones = new Uint8Array(256)
  for (let i = 1; i < 256; i++) ones[i] = (i & 1) + ones[i >> 1]!
  const hamming = (a: Uint8Array, b: Uint8Array) => {
    let d = 0
    for (let i = 0; i < a.length; i++) d += ones[a[i]! ^ b[i]!]!
    return d
  }
  let keptInt8 = 0
  let keptBinary = 0
  let within = 0
  for (let q = 0; q < queries; q++) {
    const exact = new Set(top10(count, q, (i) => dot(data[q]!, data[i]!)))
    keptInt8 += top10(count, q, (i) => dot(int8[q]!, int8[i]!)).filter((i) => exact.has(i)).length
    keptBinary += top10(count, q, (i) => -hamming(bits[q]!, bits[i]!)).filter((i) => exact.has(i)).length
    within += dot(data[q]!, data[q + clusters]!)
  }
  return { vectors: count, width, clusters, queries, withinCluster: within / queries, int8: keptInt8 / (queries * 10), binary: keptBinary / (queries * 10) }
}

/** The figure as the report shows it. */
export const markdown = (recall: Recall): Array<string> => [
  "## Quantized vectors (issue 60)",
  "",
  `${recall.vectors.toLocaleString("en-US")} generated unit vectors of ${recall.width.toLocaleString("en-US")} dimensions in ${recall.clusters} clusters (fixed seed; cosine within a cluster ${recall.withinCluster.toFixed(3)}), ${recall.queries} queries: the share of each query's float top-10 neighbours (dot product) kept by the gateway's own quantization (\`output_dtype\` made by the gateway, \`packages/core/src/vectors/OutputDtype.ts\`).`,
  "",
  "| type | top-10 kept | bar |",
  "|---|---:|---|",
  `| int8 (integer dot product) | ${(recall.int8 * 100).toFixed(1)} % | ≥ 95 % |`,
  `| binary (Hamming distance) | ${(recall.binary * 100).toFixed(1)} % | reported |`,
  ""
]
