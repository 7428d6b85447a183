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
import { Schema } from "effect"

/**
 * The adapters of servers a platform team runs itself.
 *
 * @since 0.10.0
 */
export const selfHostedAdapters: ReadonlyArray<string> = ["tei", "infinity", "ollama", "vllm"]

/**
 * Seconds between two health probes of a replica when the provider names none.
 *
 * @since 0.10.0
 */
export const defaultHealthIntervalS = 5

/**
 * Seconds between two listings of a discovering provider's models when it names none.
 *
 * @since 0.11.0
 */
export const defaultDiscoverIntervalS = 60

const HttpUrl = Schema.String.check(Schema.isPattern(/^https?:\/\/\S+$/u, { expected: "an http(s) URL" }))

/**
 * @since 0.10.0
 */
export const SelfHostedFields = Schema.Struct({
  base_urls: Schema.optionalKey(Schema.Array(HttpUrl).check(Schema.isMinLength(1))),
  health_interval_s: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3600 }))),
  discover: Schema.optionalKey(Schema.Boolean),
  discover_interval_s: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 86_400 }))),
  models: Schema.optionalKey(Schema.Record(
    Schema.String,
    Schema.String.check(Schema.isPattern(/^[^/\s]+\/\S+$/u, { expected: "a model slug of the form <vendor>/<model_name>" }))
  ))
})

/**
 * What is wrong with a provider's self-hosted fields: replicas or probes on an adapter that is no
 * server of one's own, `base_urls` beside `base_url`, a replica listed twice.
 *
 * @since 0.10.0
 */
export const issues = (
  p: typeof SelfHostedFields.Type & {
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
