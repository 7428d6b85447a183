/**
 * Routing step 4: the plan. Decides which endpoints a request tries, in which order, and
 * explains the decision.
 *
 * **Details**
 *
 * Candidates (endpoints of active providers serving the model) pass the filters (see
 * `Filters`), then one of three strategies orders the eligible ones:
 *
 * 1. `order` given: the endpoints matching each listed slug, in list order (several endpoints
 *    under one slug go cheapest first); then, unless `allow_fallbacks` is `false`, the rest as
 *    in 2 or 3 below (sorted when `sort` is given, else cheapest first).
 * 2. `sort` given: every eligible endpoint sorted by the strategy (`Sorts`), no load
 *    balancing.
 * 3. Neither: load balancing. The primary is drawn at random, weighted by 1 / price², among
 *    the endpoints without a failure in the last 30 s; the others follow as fallbacks, cheapest
 *    first, recently failed ones last.
 *
 * In 1 and 2, when fallbacks are allowed, an endpoint inside its outage window (a failure that
 * counted against it in the last 30 s, `EndpointStats.recentlyFailed`) goes behind every endpoint
 * that is not, the plan's order kept within each group: the spec's "falls back to the next when
 * unavailable", without waiting out a provider that is known to be down. With `allow_fallbacks:
 * false` the caller pinned the endpoints, and their order stands.
 *
 * `preferred_max_latency` and `preferred_min_throughput` move endpoints that miss a cutoff
 * behind those that meet all of them (in 2, in the drawn pool of 3, and among the fallbacks
 * of 1); they never exclude. Before that, endpoints lacking a parameter the request sent
 * (`EndpointParameters.missing`; with `require_parameters: true` they are excluded instead) go
 * behind those that support every one, in the same places. With `allow_fallbacks: false` the plan holds only the ordered
 * endpoints (1) or only the first endpoint (2, 3).
 *
 * **Gotchas**
 *
 * The draw is reproducible: the same input and `seed` give the same plan. The explanation
 * records the seed, the uniform number drawn and each endpoint's weight.
 *
 * @since 0.1.0
 */
import { Effect, Result } from "effect"
import type { Catalog, Provider, Task, Workspace } from "../catalog/Catalog.ts"
import type * as Cost from "../catalog/Cost.ts"
import { inputModalitiesOf, openWorkspace } from "../catalog/Catalog.ts"
import { InputNotAccepted, ModelNotFound, NoEligibleProvider, type RoutingError, WidthNotOffered, WrongTask } from "./RoutingError.ts"
import * as Matryoshka from "../vectors/Matryoshka.ts"
import type { CandidateReport } from "./CandidateReport.ts"
import type { InputModality } from "../schema/EmbeddingRequest.ts"
import type { Partition, ProviderPreferences, SortBy } from "../schema/ProviderPreferences.ts"
import type { Candidate } from "./Candidates.ts"
import * as Candidates from "./Candidates.ts"
import * as EndpointParameters from "./EndpointParameters.ts"
import type { StatsById } from "./EndpointStats.ts"
import { lookup, meetsCutoffs, recentlyFailed } from "./EndpointStats.ts"
import type { Exclusion } from "./Filters.ts"
import * as Filters from "./Filters.ts"
import type { Effective } from "./Preferences.ts"
import * as Preferences from "./Preferences.ts"
import * as Sorts from "./Sorts.ts"
import * as WeightedDraw from "./WeightedDraw.ts"

/**
 * Everything the plan depends on, as plain data.
 *
 * @since 0.1.0
 */
export interface PlanInput {
  readonly catalog: Catalog
  readonly model: string
  /** What the request asks of the model; default `embeddings`. Only endpoints of it are candidates. */
  readonly task?: Task | undefined
  /**
   * What the request is expected to consume. Given, endpoints are priced by what the request
   * would cost at each (rerank endpoints are priced per token or per search); absent, by their
   * per-token prompt price.
   */
  readonly consumption?: Cost.Consumption | undefined
  /** The request's `provider` object. */
  readonly preferences?: ProviderPreferences | null | undefined
  /** The caller's workspace settings; default: unrestricted. */
  readonly workspace?: Workspace | undefined
  /** Provider parameters the request sent (`EmbeddingRequest.sentParameters`); default none. */
  readonly sentParameters?: ReadonlyArray<string> | undefined
  /** Kinds of input the request carries (`EmbeddingRequest.inputModalities`); default text. */
  readonly inputModalities?: ReadonlyArray<InputModality> | undefined
  /** The width the request asks for (`dimensions`), if any. */
  readonly dimensions?: number | undefined
  /** Whether a provider can take requests (`Catalog.isActive` with the environment). */
  readonly isActive: (provider: Provider) => boolean
  /** Live statistics by candidate id; default none. */
  readonly stats?: StatsById | undefined
  /** Epoch milliseconds. */
  readonly now: number
  /** Seed of the random draw (any 32-bit integer). */
  readonly seed: number
}

/**
 * Which strategy ordered the attempts.
 *
 * @since 0.1.0
 */
type Mode = "order" | "sort" | "default"

/**
 * Why the plan is what it is. JSON-serialisable, for logs and error metadata.
 *
 * @since 0.1.0
 */
interface Explanation {
  readonly model: string
  readonly mode: Mode
  readonly seed: number
  readonly allow_fallbacks: boolean
  readonly order: ReadonlyArray<string> | null
  readonly sort: { readonly by: SortBy; readonly partition: Partition } | null
  /** Default mode: the uniform number drawn and the ids it was drawn among. */
  readonly draw?: { readonly u: number; readonly pool: ReadonlyArray<string> }
  readonly candidates: ReadonlyArray<CandidateReport>
}

/**
 * The endpoints to try, first to last, and why.
 *
 * @since 0.1.0
 */
export interface Plan {
  readonly model: string
  readonly attempts: ReadonlyArray<Candidate>
  readonly preferences: Effective
  /** The seed the draw used (the explanation's `seed`). */
  readonly seed: number
  /** Built the first time it is read: most requests never ask why. */
  readonly explanation: Explanation
}

interface Notes {
  weight?: number
  sort_key?: string | number | null
  order_match?: string
}


const preferredFirst = (cs: ReadonlyArray<Candidate>, meets: (c: Candidate) => boolean) => [
  ...cs.filter(meets),
  ...cs.filter((c) => !meets(c))
]

interface Decision {
  readonly mode: Mode
  readonly attempts: ReadonlyArray<Candidate>
  readonly notes: Map<string, Notes>
  readonly draw?: { readonly u: number; readonly pool: ReadonlyArray<string> }
}

const decide = (
  eligible: ReadonlyArray<Candidate>,
  prefs: Effective,
  input: PlanInput
): Decision | string => {
  const stats = input.stats ?? {}
  const healthy = (c: Candidate) => !recentlyFailed(lookup(stats, c), input.now)
  const cheapest = Sorts.byPriceFor(input.consumption)
  const cheapestFirst = (cs: ReadonlyArray<Candidate>) => [...cs].sort(cheapest)
  const notes = new Map<string, Notes>()
  const note = (c: Candidate, n: Notes) => notes.set(c.id, { ...notes.get(c.id), ...n })
  const meets = (c: Candidate) => meetsCutoffs(prefs, lookup(stats, c))
  // The soft parameter filter: endpoints that support every parameter sent come first.
  const sent = input.sentParameters ?? []
  const fits = (c: Candidate) => EndpointParameters.missing(sent, c.endpoint).length === 0
  const sorted = (cs: ReadonlyArray<Candidate>) => {
    if (prefs.sort === null) return preferredFirst(preferredFirst(cheapestFirst(cs), meets), fits)
    const { by, partition } = prefs.sort
    for (const c of cs) note(c, { sort_key: Sorts.sortKey(by, c, stats, input.now, input.consumption) })
    return preferredFirst(preferredFirst(Sorts.sort(cs, Sorts.orderOf(by, stats, input.now, input.consumption), partition), meets), fits)
  }

  if (prefs.order !== null) {
    const taken = new Set<string>()
    const ordered: Array<Candidate> = []
    for (const slug of prefs.order) {
      const matched = cheapestFirst(eligible.filter((c) => !taken.has(c.id) && Candidates.matchesSlug(slug, c)))
      for (const c of matched) {
        taken.add(c.id)
        ordered.push(c)
        note(c, { order_match: slug })
      }
    }
    if (!prefs.allow_fallbacks) {
      return ordered.length > 0
        ? { mode: "order", attempts: ordered, notes }
        : `no provider in provider.order (${prefs.order.join(", ")}) can serve the model, and allow_fallbacks is false`
    }
    return { mode: "order", attempts: preferredFirst([...ordered, ...sorted(eligible.filter((c) => !taken.has(c.id)))], healthy), notes }
  }

  if (prefs.sort !== null) {
    const all = sorted(eligible)
    return { mode: "sort", attempts: prefs.allow_fallbacks ? preferredFirst(all, healthy) : all.slice(0, 1), notes }
  }

  const tiers = [true, false].flatMap((fit) => {
    const group = eligible.filter((c) => fits(c) === fit)
    return [
      group.filter((c) => healthy(c) && meets(c)),
      group.filter((c) => healthy(c) && !meets(c)),
      group.filter((c) => !healthy(c) && meets(c)),
      group.filter((c) => !healthy(c) && !meets(c))
    ]
  })
  const pool = tiers.find((t) => t.length > 0)!
  const weights = WeightedDraw.inverseSquareWeights(pool.map((c) => Sorts.priceOf(c, input.consumption)))
  pool.forEach((c, i) => {
    note(c, { weight: weights[i]! })
  })
  const u = WeightedDraw.mulberry32(input.seed)()
  const primary = pool[WeightedDraw.pick(weights, u)]!
  const fallbacks = tiers.flatMap((t) => cheapestFirst(t.filter((c) => c.id !== primary.id)))
  return {
    mode: "default",
    attempts: prefs.allow_fallbacks ? [primary, ...fallbacks] : [primary],
    notes,
    draw: { u, pool: pool.map((c) => c.id) }
  }
}

const report = (
  c: Candidate,
  status: CandidateReport["status"],
  extra: Partial<CandidateReport>
): CandidateReport => ({
  id: c.id,
  provider: c.provider.slug,
  variant: c.endpoint.variant,
  prompt_price: c.endpoint.pricing.prompt,
  ...(c.endpoint.task === "rerank" ? { search_price: c.endpoint.pricing.search } : {}),
  status,
  ...extra
})

const excludedReport = (c: Candidate, why: Exclusion) =>
  report(c, "excluded", { excluded_by: why.filter, detail: why.detail })

/**
 * The plan as a pure function: {@link plan} without the effect, for property tests and for
 * callers outside an Effect.
 *
 * @since 0.1.0
 */
export const compute = (input: PlanInput): Result.Result<Plan, RoutingError> => {
  const task = input.task ?? "embeddings"
  const set = Candidates.forModel(input.catalog, input.model, input.isActive, task)
  if (set.active.length === 0 && set.inactive.length === 0) {
    return Result.fail(
      set.otherTask === undefined
        ? new ModelNotFound({ model: input.model })
        : new WrongTask({ model: input.model, task: set.otherTask, requested: task })
    )
  }
  const inputs = input.inputModalities ?? ["text"]
  const all = [...set.active, ...set.inactive]
  if (!all.some((c) => inputs.every((m) => inputModalitiesOf(c.provider, c.endpoint).includes(m)))) {
    const accepted = [...new Set(all.flatMap((c) => inputModalitiesOf(c.provider, c.endpoint)))]
    return Result.fail(
      new InputNotAccepted({ model: set.model, task, missing: inputs.filter((m) => !accepted.includes(m)), accepted })
    )
  }
  if (!all.some((c) => EndpointParameters.offersWidth(c.endpoint, input.dimensions))) {
    const widths = [...new Set(all.map((c) => Matryoshka.describeWidths(c.endpoint)))]
    return Result.fail(new WidthNotOffered({ model: set.model, width: input.dimensions!, widths }))
  }
  const prefs = Preferences.effective(input.preferences, input.workspace ?? openWorkspace)
  const { eligible, excluded } = Filters.apply({
    preferences: prefs,
    sentParameters: input.sentParameters ?? [],
    inputModalities: inputs,
    dimensions: input.dimensions
  }, set.active)
  const excludedReports = () => [
    ...set.inactive.map((c) =>
      excludedReport(c, {
        filter: "inactive",
        detail: c.provider.enabled ? "provider credential is not configured" : "provider is disabled"
      })
    ),
    ...excluded.map(({ candidate, exclusion }) => excludedReport(candidate, exclusion))
  ]
  // Every provider serving the model is switched off: the answer says so rather than listing filters.
  const disabled = [...new Set(set.inactive.filter((c) => !c.provider.enabled).map((c) => c.provider.slug))]
  if (set.active.length === 0 && disabled.length > 0 && set.inactive.every((c) => !c.provider.enabled)) {
    return Result.fail(new NoEligibleProvider({ model: set.model, reason: "no enabled provider", candidates: excludedReports(), disabled }))
  }
  const decision = eligible.length === 0
    ? "every endpoint serving the model was excluded"
    : decide(eligible, prefs, input)
  if (typeof decision === "string") {
    const unused = eligible.map((c) => report(c, "unused", {}))
    return Result.fail(new NoEligibleProvider({ model: set.model, reason: decision, candidates: [...excludedReports(), ...unused] }))
  }
  const explain = (): Explanation => {
    const stats = input.stats ?? {}
    const rank = new Map(decision.attempts.map((c, i) => [c.id, i]))
    const eligibleReports = eligible.map((c) => {
      const s = lookup(stats, c)
      const r = rank.get(c.id)
      const missing = EndpointParameters.missing(input.sentParameters ?? [], c.endpoint)
      return report(c, r === undefined ? "unused" : "attempt", {
        ...(r === undefined ? {} : { rank: r }),
        ...decision.notes.get(c.id),
        meets_cutoffs: meetsCutoffs(prefs, s),
        recent_failure: recentlyFailed(s, input.now),
        ...(missing.length > 0 ? { missing_parameters: missing } : {})
      })
    }).sort((a, b) => (a.rank ?? eligible.length) - (b.rank ?? eligible.length))
    return {
      model: set.model,
      mode: decision.mode,
      seed: input.seed,
      allow_fallbacks: prefs.allow_fallbacks,
      order: prefs.order,
      sort: prefs.sort,
      ...(decision.draw === undefined ? {} : { draw: decision.draw }),
      candidates: [...eligibleReports, ...excludedReports()]
    }
  }
  let explanation: Explanation | undefined
  return Result.succeed({
    model: set.model,
    attempts: decision.attempts,
    preferences: prefs,
    seed: input.seed,
    get explanation() {
      if (explanation === undefined) explanation = explain()
      return explanation
    }
  })
}

/**
 * Plans a request: the ordered endpoints to try and the explanation.
 *
 * **Gotchas**
 *
 * Fails with `ModelNotFound` when the model is unknown, `NoEligibleProvider` when every endpoint is excluded
 * (`metadata.candidates` says why each one was), and when `allow_fallbacks` is `false` and no
 * endpoint matches `order`.
 *
 * @since 0.1.0
 */
export const plan = (input: PlanInput): Effect.Effect<Plan, RoutingError> =>
  Effect.suspend(() => Effect.fromResult(compute(input)))
