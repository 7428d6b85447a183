/**
 * `truncate: "chunk"`: an input longer than its model takes is embedded as windows within the
 * limit, on token boundaries, and answered as one vector, the token-weighted mean of the
 * windows' vectors re-normalised to L2 = 1.
 *
 * **Details**
 *
 * An input of `tokens` tokens under a limit of `max` becomes `⌈tokens / max⌉` consecutive windows
 * of as equal a size as can be (so that the last one is not a sliver that counts for as much as
 * its words), no overlap: the windows' tokens add up to the input's, and usage counts each
 * window as embedded.
 *
 * @since 0.12.0
 */
import { l2Norm } from "./Matryoshka.ts"

/**
 * One window: the tokens `[start, end)` of its input.
 *
 * @since 0.12.0
 */
export interface Window {
  readonly start: number
  readonly end: number
}

/**
 * The windows of an input of `tokens` tokens under a limit of `max` (one window, the whole, when
 * it fits).
 *
 * @since 0.12.0
 */
export const split = (tokens: number, max: number): ReadonlyArray<Window> => {
  const count = Math.max(1, Math.ceil(tokens / Math.max(1, max)))
  const out: Array<Window> = []
  const base = Math.floor(tokens / count)
  const longer = tokens - base * count
  let start = 0
  for (let i = 0; i < count; i++) {
    const end = start + base + (i < longer ? 1 : 0)
    out.push({ start, end })
    start = end
  }
  return out
}

/**
 * The token-weighted mean of vectors of one width, re-normalised to L2 = 1.
 *
 * @since 0.12.0
 */
export const weightedMean = (vectors: ReadonlyArray<ArrayLike<number>>, weights: ReadonlyArray<number>): Float64Array => {
  const width = vectors[0]?.length ?? 0
  const sum = new Float64Array(width)
  for (const [k, vector] of vectors.entries()) {
    const w = weights[k] ?? 0
    for (let i = 0; i < width; i++) sum[i] = sum[i]! + w * vector[i]!
  }
  const norm = l2Norm(sum)
  if (norm > 0) for (let i = 0; i < width; i++) sum[i] = sum[i]! / norm
  return sum
}
