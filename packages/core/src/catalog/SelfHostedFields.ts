/**
 * The provider fields of self-hosted model servers (adapters `tei`, `infinity`, `ollama`,
 * `vllm`): `base_urls`, replicas of one server listed as one provider (instead of `base_url`),
 * `health_interval_s`, how often each replica's health route is probed (default 5), and discovery:
 * `discover` (serve every model the server lists), `discover_interval_s` (how often it is asked,
 * default 60), `models` (public ids for server ids; default `<slug>/<server id>`) and
 * `default_pricing` (the discovered endpoints' price, declared beside the catalog's `Pricing`).
 *
 * @since 0.10.0
 */
import type { Schema } from "effect"
import type * as Fields from "../adapters/Fields.ts"
import { idsOfKind } from "../adapters/Registry.ts"

/**
 * The adapters of servers a platform team runs itself: the registry's modules of kind `self-hosted`.
 *
 * @since 0.10.0
 */
export const selfHostedAdapters: ReadonlyArray<string> = idsOfKind("self-hosted")

export {
  /**
   * @since 0.10.0
   */
  defaultDiscoverIntervalS,
  /**
   * @since 0.10.0
   */
  defaultHealthIntervalS
} from "../adapters/Fields.ts"

/**
 * What is wrong with a provider's self-hosted fields: replicas or probes on an adapter that is no
 * server of one's own, `base_urls` beside `base_url`, a replica listed twice.
 *
 * @since 0.10.0
 */
export const issues = (
  p: typeof Fields.SelfHostedFields.Type & {
    readonly adapter: string
    readonly base_url?: string | undefined
    readonly default_pricing?: unknown
  }
): Array<Schema.FilterIssue> => {
  const out: Array<Schema.FilterIssue> = []
  const own = selfHostedAdapters.includes(p.adapter)
  for (const field of ["base_urls", "health_interval_s", "discover", "discover_interval_s", "models", "default_pricing"] as const) {
    if (p[field] !== undefined && !own) {
      out.push({ path: [field], issue: `${field} belongs to a self-hosted adapter (${selfHostedAdapters.join(", ")}), not ${p.adapter}` })
    }
  }
  if (own && p.discover !== true) {
    for (const field of ["discover_interval_s", "models", "default_pricing"] as const) {
      if (p[field] !== undefined) out.push({ path: [field], issue: `${field} applies to discovered models: set "discover": true` })
    }
  }
  if (p.base_urls !== undefined && p.base_url !== undefined) {
    out.push({ path: ["base_urls"], issue: "give base_url (one server) or base_urls (its replicas), not both" })
  }
  const seen = new Set<string>()
  p.base_urls?.forEach((url, i) => {
    const key = url.replace(/\/+$/u, "")
    if (seen.has(key)) out.push({ path: ["base_urls", i], issue: `replica ${url} is listed twice` })
    seen.add(key)
  })
  return out
}
