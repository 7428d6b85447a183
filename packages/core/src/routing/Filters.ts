/**
 * Routing step 2: the filters that remove endpoints a request may not use.
 *
 * **Details**
 *
 * Each filter is a pure function of the context and one candidate that returns `undefined`
 * (kept) or a sentence saying why the endpoint is excluded. They run in the order of
 * {@link filters}; the first that excludes a candidate names the exclusion, so an explanation
 * always gives one reason per endpoint.
 *
 * - `workspace_only`, `only`: the endpoint must match one listed slug (see
 *   `Candidates.matchesSlug`), when a list is given.
 * - `ignore`: the endpoint must match none.
 * - `data_collection`: with `deny`, providers that may store or train on data are excluded.
 * - `zdr`: with `true`, providers without zero data retention are excluded.
 * - `quantizations`: the endpoint's quantization must be listed.
 * - `input_modalities`: the endpoint must accept every kind of input the request carries
 *   (text, token ids, images, audio, video, files).
 * - `dimensions`: a Matryoshka model's endpoint must allow the width asked
 *   (`EndpointParameters.offersWidth`).
 * - `require_parameters`: with `true`, the endpoint must take natively every parameter the
 *   request sent (`EndpointParameters.missing`: what the gateway makes itself never counts).
 * - `enforce_distillable_text`: with `true`, the model must allow distillation.
 * - `max_price`: each given limit must be at least the endpoint's price of that kind.
 *
 * @since 0.1.0
 */
import { inputModalitiesOf } from "../catalog/Catalog.ts"
import * as Cost from "../catalog/Cost.ts"
import * as Money from "../catalog/Money.ts"
import type { InputModality } from "../schema/EmbeddingRequest.ts"
import type { Candidate } from "./Candidates.ts"
import { matchesSlug } from "./Candidates.ts"
import type { Workspace } from "../catalog/Catalog.ts"
import * as Matryoshka from "../vectors/Matryoshka.ts"
import * as EndpointParameters from "./EndpointParameters.ts"
import { type Effective, effective, limitedPrices } from "./Preferences.ts"

/**
 * What the filters look at besides the candidate.
 *
 * @since 0.1.0
 */
export interface FilterContext {
  readonly preferences: Effective
  /** Provider parameters the request sent (`EmbeddingRequest.sentParameters`). */
  readonly sentParameters: ReadonlyArray<string>
  /** Kinds of input the request carries (`EmbeddingRequest.inputModalities`). */
  readonly inputModalities: ReadonlyArray<InputModality>
  /** The width the request asks for (`dimensions`), if any. */
  readonly dimensions?: number | undefined
}

/**
 * A filter: `undefined` keeps the candidate, a string excludes it and says why.
 *
 * @since 0.1.0
 */
export type Filter = (context: FilterContext, candidate: Candidate) => string | undefined

/**
 * The name of each reason an endpoint can be excluded for; `inactive` comes from the
 * candidates step (provider disabled or credential missing).
 *
 * @since 0.1.0
 */
export type FilterName =
  | "inactive"
  | "workspace_only"
  | "only"
  | "ignore"
  | "data_collection"
  | "zdr"
  | "quantizations"
  | "input_modalities"
  | "dimensions"
  | "require_parameters"
  | "enforce_distillable_text"
  | "max_price"

/**
 * Why one endpoint was excluded.
 *
 * @since 0.1.0
 */
export interface Exclusion {
  readonly filter: FilterName
  readonly detail: string
}

/**
 * Keeps endpoints the workspace's `only` list names (all when it has none).
 *
 * @since 0.1.0
 */
export const workspaceOnly: Filter = ({ preferences }, c) => {
  const allowed = preferences.workspace_only
  return allowed === null || allowed.some((slug) => matchesSlug(slug, c))
    ? undefined
    : `the workspace allows only ${allowed.join(", ")}`
}

/**
 * Keeps endpoints the request's `provider.only` names (all when it has none).
 *
 * @since 0.1.0
 */
export const only: Filter = ({ preferences }, c) => {
  const allowed = preferences.only
  return allowed === null || allowed.some((slug) => matchesSlug(slug, c))
    ? undefined
    : `provider.only allows only ${allowed.join(", ")}`
}

/**
 * Drops endpoints the request's or the workspace's `ignore` lists name.
 *
 * @since 0.1.0
 */
export const ignore: Filter = ({ preferences }, c) => {
  const hit = preferences.ignore.find((slug) => matchesSlug(slug, c))
  return hit === undefined ? undefined : `ignored by ${JSON.stringify(hit)}`
}

/**
 * With `data_collection: "deny"`, drops providers that may store or train on data.
 *
 * @since 0.1.0
 */
export const dataCollection: Filter = ({ preferences }, c) =>
  preferences.data_collection === "deny" && c.provider.data_collection !== "deny"
    ? "data_collection is deny and this provider may store or train on data"
    : undefined

/**
 * With `zdr: true`, drops providers without zero data retention.
 *
 * @since 0.1.0
 */
export const zdr: Filter = ({ preferences }, c) =>
  preferences.zdr && !c.provider.zdr ? "zdr is required and this provider retains data" : undefined

/**
 * Keeps endpoints whose quantization is listed (all when no list is given).
 *
 * @since 0.1.0
 */
export const quantizations: Filter = ({ preferences }, c) => {
  const allowed = preferences.quantizations
  return allowed === null || allowed.includes(c.endpoint.quantization)
    ? undefined
    : `quantization ${c.endpoint.quantization} is not in ${allowed.join(", ")}`
}

/**
 * Drops endpoints that cannot take every kind of input the request carries.
 *
 * @since 0.1.0
 */
export const inputModalities: Filter = ({ inputModalities }, c) => {
  const accepted = inputModalitiesOf(c.provider, c.endpoint)
  const missing = inputModalities.filter((m) => !accepted.includes(m))
  return missing.length === 0 ? undefined : `does not accept ${missing.join(", ")} input`
}

/**
 * Drops the endpoints of a Matryoshka model that does not allow the width asked.
 *
 * @since 0.12.0
 */
export const dimensions: Filter = ({ dimensions }, c) =>
  EndpointParameters.offersWidth(c.endpoint, dimensions)
    ? undefined
    : `width ${dimensions} is not one the model allows (${Matryoshka.describeWidths(c.endpoint)})`

/**
 * With `require_parameters: true`, drops endpoints that do not take natively a parameter the
 * request sent.
 *
 * @since 0.1.0
 */
export const requireParameters: Filter = ({ preferences, sentParameters }, c) => {
  if (!preferences.require_parameters) return undefined
  const missing = EndpointParameters.missing(sentParameters, c.endpoint)
  return missing.length === 0 ? undefined : `does not support ${missing.join(", ")}`
}

/**
 * With `enforce_distillable_text: true`, drops models that do not allow distillation.
 *
 * @since 0.1.0
 */
export const enforceDistillableText: Filter = ({ preferences }, c) =>
  preferences.enforce_distillable_text && !c.endpoint.distillable ? "the model does not allow distillation" : undefined

/**
 * Drops endpoints whose price of any kind exceeds the matching `max_price` limit.
 *
 * @since 0.1.0
 */
export const maxPrice: Filter = ({ preferences }, c) => {
  for (const kind of limitedPrices) {
    const limit = preferences.max_price[kind]
    if (limit === undefined) continue
    const price = Cost.attoPrices(c.endpoint.pricing)[kind]
    if (price > limit) return `${kind} price ${c.endpoint.pricing[kind]} exceeds max_price.${kind} ${Money.toDecimal(limit)}`
  }
  return undefined
}

/**
 * Every filter, in the order they are applied.
 *
 * @since 0.1.0
 */
export const filters: ReadonlyArray<readonly [Exclude<FilterName, "inactive">, Filter]> = [
  ["workspace_only", workspaceOnly],
  ["only", only],
  ["ignore", ignore],
  ["data_collection", dataCollection],
  ["zdr", zdr],
  ["quantizations", quantizations],
  ["input_modalities", inputModalities],
  ["dimensions", dimensions],
  ["require_parameters", requireParameters],
  ["enforce_distillable_text", enforceDistillableText],
  ["max_price", maxPrice]
]

/**
 * The first filter that excludes the candidate, or `undefined` when it is eligible.
 *
 * @since 0.1.0
 */
const exclusion = (context: FilterContext, candidate: Candidate): Exclusion | undefined => {
  for (const [filter, apply] of filters) {
    const detail = apply(context, candidate)
    if (detail !== undefined) return { filter, detail }
  }
  return undefined
}

/**
 * Splits candidates into the eligible ones (order kept) and the excluded ones with their
 * reason.
 *
 * @since 0.1.0
 */
export const apply = (
  context: FilterContext,
  candidates: ReadonlyArray<Candidate>
): {
  readonly eligible: ReadonlyArray<Candidate>
  readonly excluded: ReadonlyArray<{ readonly candidate: Candidate; readonly exclusion: Exclusion }>
} => {
  const eligible: Array<Candidate> = []
  const excluded: Array<{ candidate: Candidate; exclusion: Exclusion }> = []
  for (const candidate of candidates) {
    const why = exclusion(context, candidate)
    if (why === undefined) eligible.push(candidate)
    else excluded.push({ candidate, exclusion: why })
  }
  return { eligible, excluded }
}

/**
 * Whether a workspace's own settings (`only`, `ignore`, `data_collection`, `zdr`) leave the
 * endpoint to its keys, before any request's preferences: what a key's model listing shows.
 *
 * @since 0.4.0
 */
export const allowedByWorkspace = (workspace: Workspace, candidate: Candidate): boolean =>
  exclusion({ preferences: effective(null, workspace), sentParameters: [], inputModalities: [] }, candidate) === undefined
