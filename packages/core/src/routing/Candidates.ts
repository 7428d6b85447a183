/**
 * Routing step 1: the endpoints that serve the requested model.
 *
 * **Details**
 *
 * Model ids match case-insensitively (`BAAI/bge-m3` finds `baai/bge-m3`). Endpoints of
 * inactive providers (disabled, or missing their credential) are kept apart so the plan can
 * explain why they were not used.
 *
 * @since 0.1.0
 */
import type { Endpoint, Provider, Task } from "../catalog/Catalog.ts"
import type { Catalog } from "../catalog/Catalog.ts"
import * as ProviderNames from "./ProviderNames.ts"

/**
 * One endpoint of one provider, as routing sees it.
 *
 * **Details**
 *
 * `id` is `<provider>/<variant>@<model>` (`deepinfra/default@baai/bge-m3`): unique within a
 * catalog, stable across restarts, and the key of live statistics.
 *
 * @since 0.1.0
 */
export interface Candidate {
  readonly id: string
  readonly provider: Provider
  readonly endpoint: Endpoint
}

/**
 * The id of an endpoint (see {@link Candidate}).
 *
 * @since 0.1.0
 */
export const endpointId = (provider: Provider, endpoint: Endpoint): string =>
  `${provider.slug}/${endpoint.variant}@${endpoint.model.toLowerCase()}`

/**
 * The endpoints serving one model, split by whether their provider is active.
 *
 * @since 0.1.0
 */
export interface CandidateSet {
  readonly model: string
  readonly active: ReadonlyArray<Candidate>
  readonly inactive: ReadonlyArray<Candidate>
  /** The task of the model's endpoints when the model exists only for another task. */
  readonly otherTask?: Task
}

// A catalog's endpoints by lower-case model id, in catalog order: built once per catalog (a
// catalog is immutable), so routing a request reads one list instead of scanning every endpoint.
const indexes = new WeakMap<Catalog, ReadonlyMap<string, ReadonlyArray<Candidate>>>()

const indexOf = (catalog: Catalog): ReadonlyMap<string, ReadonlyArray<Candidate>> => {
  const known = indexes.get(catalog)
  if (known !== undefined) return known
  const index = new Map<string, Array<Candidate>>()
  for (const provider of catalog.providers) {
    for (const endpoint of provider.endpoints) {
      const model = endpoint.model.toLowerCase()
      let list = index.get(model)
      if (list === undefined) {
        list = []
        index.set(model, list)
      }
      list.push({ id: endpointId(provider, endpoint), provider, endpoint })
    }
  }
  indexes.set(catalog, index)
  return index
}

/**
 * Every endpoint serving `model` for `task` (default `embeddings`), in catalog order. Both
 * lists empty means the model is unknown, or, with `otherTask` set, serves another task.
 *
 * **Details**
 *
 * The catalog's endpoints are indexed by model the first time it is asked about (a catalog is
 * immutable), and the same candidate objects are returned on every call.
 *
 * @since 0.1.0
 */
export const forModel = (
  catalog: Catalog,
  model: string,
  isActive: (provider: Provider) => boolean,
  task: Task = "embeddings"
): CandidateSet => {
  const wanted = model.toLowerCase()
  const active: Array<Candidate> = []
  const inactive: Array<Candidate> = []
  let otherTask: Task | undefined
  let provider: Provider | undefined
  let on = false
  for (const candidate of indexOf(catalog).get(wanted) ?? []) {
    if (candidate.endpoint.task !== task) {
      otherTask = candidate.endpoint.task
      continue
    }
    // A provider's endpoints are consecutive: whether it is active is asked once.
    if (candidate.provider !== provider) {
      provider = candidate.provider
      on = isActive(provider)
    }
    if (on) active.push(candidate)
    else inactive.push(candidate)
  }
  return active.length === 0 && inactive.length === 0 && otherTask !== undefined
    ? { model: wanted, active, inactive, otherTask }
    : { model: wanted, active, inactive }
}

/**
 * Whether a provider slug from `order`, `only` or `ignore` names this endpoint.
 *
 * **Details**
 *
 * `"deepinfra"` names every endpoint of the provider; `"deepinfra/fp8"` only those whose
 * variant or quantization is `fp8` (`"openai/default"` names the default variant). A provider
 * is named by its slug, its configured `name` or its public name (`"DeepInfra"`,
 * `"Google AI Studio"`: `ProviderNames`). Matching ignores case and surrounding spaces.
 *
 * @since 0.1.0
 */
export const matchesSlug = (slug: string, candidate: Candidate): boolean => {
  const wanted = slug.trim().toLowerCase()
  if (ProviderNames.names(wanted, candidate.provider)) return true
  const cut = wanted.indexOf("/")
  if (cut === -1) return false
  const provider = wanted.slice(0, cut).trim()
  const tag = wanted.slice(cut + 1).trim()
  return ProviderNames.names(provider, candidate.provider) &&
    (tag === candidate.endpoint.variant || tag === candidate.endpoint.quantization)
}
