import type { RoutePlanReport } from "@switchyard/core/schema/RoutePlanReport"

type Explanation = RoutePlanReport["explanation"]
type Candidate = Explanation["candidates"][number]

/**
 * How the gateway chose the order, in a sentence.
 */
export const modeSentence = (explanation: Explanation): string => {
  const fallbacks = explanation.allow_fallbacks ? "fallbacks allowed" : "no fallbacks"
  switch (explanation.mode) {
    case "order":
      return `Ordered by the request: ${(explanation.order ?? []).join(", ")} first; ${fallbacks}.`
    case "sort":
      return `Sorted by ${explanation.sort?.by ?? "price"} (no load balancing); ${fallbacks}.`
    case "default":
      return `Load balanced: drawn at random weighted by 1/price², cheapest fallbacks after; ${fallbacks}.`
  }
}

/**
 * Why a candidate is where it is: the filter that removed it, or what put it at its rank.
 */
export const candidateReason = (candidate: Candidate): string => {
  if (candidate.status === "excluded") {
    return [candidate.excluded_by, candidate.detail].filter((part) => part !== undefined && part !== "").join(": ")
  }
  const reasons: Array<string> = []
  if (candidate.order_match !== undefined) reasons.push(`matches order entry ${candidate.order_match}`)
  if (candidate.weight !== undefined) reasons.push(`draw weight ${candidate.weight.toFixed(2)}`)
  if (candidate.sort_key !== undefined && candidate.sort_key !== null) reasons.push(`sort key ${candidate.sort_key}`)
  if (candidate.meets_cutoffs === false) reasons.push("pushed back: misses the latency or throughput cutoff")
  if (candidate.recent_failure === true) reasons.push("pushed back: failed recently")
  if (candidate.status === "unused") reasons.push("not tried: fallbacks are off")
  return reasons.join("; ")
}

/**
 * The candidates in the order a person reads them: the attempts by rank, then the rest.
 */
export const orderedCandidates = (explanation: Explanation): ReadonlyArray<Candidate> =>
  [...explanation.candidates].sort((a, b) => {
    const rank = (c: Candidate) => (c.status === "attempt" ? (c.rank ?? 0) : c.status === "unused" ? 10_000 : 20_000)
    return rank(a) - rank(b)
  })
