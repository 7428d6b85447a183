/**
 * Matryoshka models: a model trained so that the first `n` numbers of its vector, re-normalised,
 * are themselves a good vector of width `n`. The gateway can then make any width the model
 * allows from the full vector, whichever provider served it.
 *
 * **Details**
 *
 * An endpoint says it serves a Matryoshka model with `matryoshka: true` (every width from 1 to
 * its `dimensions`) or with the list of the widths the model allows (Cohere embed-v4: 256, 512,
 * 1024, 1536; a listed width above `dimensions`, such as Voyage's 2048, only where the provider
 * takes `dimensions`). The shorter vector is {@link cut}: the first `n` values divided by their
 * L2 norm.
 *
 * @since 0.12.0
 */

/**
 * What an endpoint says of its model (the catalog's `matryoshka` and `dimensions`).
 *
 * @since 0.12.0
 */
export interface Declared {
  readonly matryoshka?: true | ReadonlyArray<number> | undefined
  readonly dimensions?: number | undefined
}

/**
 * Whether the model allows a width: one of its listed widths, or any from 1 to its own width.
 *
 * @since 0.12.0
 */
export const allows = (endpoint: Declared, width: number): boolean => {
  const declared = endpoint.matryoshka
  if (declared === undefined) return false
  return declared === true ? width >= 1 && width <= (endpoint.dimensions ?? 0) : declared.includes(width)
}

/**
 * The widths a Matryoshka model allows, as an answer names them: its list, or the range
 * `1..dimensions`.
 *
 * @since 0.12.0
 */
export const describeWidths = (endpoint: Declared): string => {
  const declared = endpoint.matryoshka
  if (declared === undefined) return String(endpoint.dimensions ?? 0)
  return declared === true ? `1 to ${endpoint.dimensions ?? 0}` : [...declared].sort((a, b) => a - b).join(", ")
}

/**
 * The first `n` values of a vector re-normalised to L2 = 1 (all zeros stay zeros).
 *
 * @since 0.12.0
 */
export const cut = (vector: ArrayLike<number>, n: number): Float64Array => {
  const width = Math.min(n, vector.length)
  const norm = l2Norm(vector, width)
  const out = new Float64Array(width)
  if (norm === 0) return out
  for (let i = 0; i < width; i++) out[i] = vector[i]! / norm
  return out
}

/**
 * The L2 norm of the first `width` values (all of them by default). Squares below about 1e-154
 * underflow and above 1e154 overflow: such a vector is summed scaled by its largest value, as
 * `Math.hypot` does; a model's vectors, whose values are near 1/√width, take the one plain pass.
 *
 * @since 0.12.0
 */
export const l2Norm = (vector: ArrayLike<number>, width = vector.length): number => {
  let sum = 0
  for (let i = 0; i < width; i++) sum += vector[i]! * vector[i]!
  if (sum > 1e-290 && sum < 1e290) return Math.sqrt(sum)
  let scale = 0
  for (let i = 0; i < width; i++) scale = Math.max(scale, Math.abs(vector[i]!))
  if (scale === 0) return 0
  let scaled = 0
  for (let i = 0; i < width; i++) scaled += (vector[i]! / scale) ** 2
  return Math.sqrt(scaled) * scale
}
