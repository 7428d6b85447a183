/**
 * The provider fields of self-hosted model servers (adapters `tei`, `infinity`, `ollama`,
 * `vllm`): `base_urls`, replicas of one server listed as one provider (instead of `base_url`), and
 * `health_interval_s`, how often each replica's health route is probed (default 5).
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

const HttpUrl = Schema.String.check(Schema.isPattern(/^https?:\/\/\S+$/u, { expected: "an http(s) URL" }))

/**
 * @since 0.10.0
 */
export const SelfHostedFields = Schema.Struct({
  base_urls: Schema.optionalKey(Schema.Array(HttpUrl).check(Schema.isMinLength(1))),
  health_interval_s: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3600 })))
})

/**
 * What is wrong with a provider's self-hosted fields: replicas or probes on an adapter that is no
 * server of one's own, `base_urls` beside `base_url`, a replica listed twice.
 *
 * @since 0.10.0
 */
export const issues = (
  p: typeof SelfHostedFields.Type & { readonly adapter: string; readonly base_url?: string | undefined }
): Array<Schema.FilterIssue> => {
  const out: Array<Schema.FilterIssue> = []
  const own = selfHostedAdapters.includes(p.adapter)
  for (const field of ["base_urls", "health_interval_s"] as const) {
    if (p[field] !== undefined && !own) {
      out.push({ path: [field], issue: `${field} belongs to a self-hosted adapter (${selfHostedAdapters.join(", ")}), not ${p.adapter}` })
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
