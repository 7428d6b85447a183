/**
 * The seeded random draw of the default routing strategy: a small deterministic PRNG
 * (mulberry32) and a pick weighted by the inverse square of the price.
 *
 * **Details**
 *
 * The draw is a pure function of its seed, so a plan can be reproduced from the seed recorded
 * in its explanation. The server picks a fresh seed per request (for example from
 * `Random.nextInt`).
 *
 * @since 0.1.0
 */

/**
 * A generator of floats in [0, 1) from a 32-bit seed (mulberry32).
 *
 * @since 0.1.0
 */
export const mulberry32 = (seed: number): (() => number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Selection weights proportional to 1 / price², normalised to sum to 1.
 *
 * **Details**
 *
 * Prices are compared relative to the cheapest, so the weights stay finite whatever their
 * scale. When some prices are zero, the free endpoints share all the weight equally and the
 * others get none.
 *
 * @since 0.1.0
 */
export const inverseSquareWeights = (prices: ReadonlyArray<bigint>): ReadonlyArray<number> => {
  if (prices.length === 0) return []
  if (prices.some((p) => p === 0n)) {
    const free = prices.filter((p) => p === 0n).length
    return prices.map((p) => (p === 0n ? 1 / free : 0))
  }
  const cheapest = prices.reduce((a, b) => (b < a ? b : a))
  const raw = prices.map((p) => {
    const ratio = Number(cheapest) / Number(p)
    return ratio * ratio
  })
  const total = raw.reduce((a, b) => a + b, 0)
  return raw.map((w) => w / total)
}

/**
 * The index chosen by `u` (a float in [0, 1)) among weights summing to 1.
 *
 * @since 0.1.0
 */
export const pick = (weights: ReadonlyArray<number>, u: number): number => {
  let acc = 0
  let last = -1
  for (let i = 0; i < weights.length; i++) {
    if (weights[i]! <= 0) continue
    last = i
    acc += weights[i]!
    if (u < acc) return i
  }
  return last === -1 ? 0 : last
}
