import type { Switchyard } from "@switchyard/client/Switchyard"
import type { EndpointRecord } from "@switchyard/core/schema/ProviderListing"

export interface ServedEndpoint extends EndpointRecord {
  /** The model the endpoint serves, as requests name it. */
  readonly model: string
}

/**
 * Every endpoint of every model the gateway serves, with its measured figures
 * (`GET /models/{author}/{slug}/endpoints` for each model of `GET /embeddings/models` and
 * `GET /rerank/models`, the key's workspace's view; for a person, who has no key's workspace, of
 * the gateway's own listing `GET /models?output_modalities=all`).
 */
export const load = async (client: Switchyard, signal?: AbortSignal, person = false): Promise<ReadonlyArray<ServedEndpoint>> => {
  const options = signal === undefined ? undefined : { signal }
  const models = person
    ? (await client.models.list({ query: { output_modalities: "all" } }, options)).data
    : await Promise.all([
      client.embeddings.listModels({ query: {} }, options),
      client.rerank.listModels({ query: {} }, options)
    ]).then(([embeddings, rerank]) => [...embeddings.data, ...rerank.data])
  const pages = await Promise.all(models.map((model) => {
    const [author = "", ...rest] = model.id.split("/")
    return client.providers.endpoints({ params: { author, slug: rest.join("/") } }, options)
  }))
  return pages.flatMap((page) => page.data.endpoints.map((endpoint) => ({ ...endpoint, model: page.data.id })))
}

/**
 * The endpoint's state in words: `status` is 0 when it serves, negative when it failed in the
 * last 30 s, -10 when its provider is not active (no credentials). Beyond those 30 s the error
 * rate of the last 30 minutes decides: an endpoint whose every call failed is "failing", one
 * with at least `degradedAt` of its calls failed is "degraded"; only the rest read "healthy".
 */
export const statusLabel = (
  endpoint: Pick<EndpointRecord, "status" | "active" | "uptime_last_30m">
): "healthy" | "degraded" | "failing" | "failed recently" | "inactive" => {
  if (!endpoint.active || endpoint.status <= -10) return "inactive"
  if (endpoint.status < 0) return "failed recently"
  const errors = errorRate(endpoint.uptime_last_30m)
  return errors === undefined || errors < degradedAt ? "healthy" : errors >= 1 ? "failing" : "degraded"
}

/** The error rate over the last 30 minutes from which an endpoint no longer reads healthy. */
const degradedAt = 0.05

/**
 * The share of calls that failed, from an uptime in percent; `undefined` without calls.
 */
export const errorRate = (uptime: number | null): number | undefined => (uptime === null ? undefined : (100 - uptime) / 100)

type Label = ReturnType<typeof statusLabel>

// Worst first: what a provider's health reads when its endpoints differ.
const severity: ReadonlyArray<Label> = ["failing", "failed recently", "degraded", "healthy", "inactive"]

/**
 * A provider's health from its endpoints': the worst of those that can serve ("inactive" only
 * when none can), with how many endpoints read that; `undefined` when the provider serves no
 * endpoint (a disabled provider).
 */
export const providerHealth = (
  endpoints: ReadonlyArray<Pick<EndpointRecord, "provider" | "status" | "active" | "uptime_last_30m">>,
  provider: string
): { readonly label: Label; readonly count: number; readonly of: number } | undefined => {
  const labels = endpoints.filter((endpoint) => endpoint.provider === provider).map(statusLabel)
  const worst = severity.find((label) => labels.includes(label))
  return worst === undefined ? undefined : { label: worst, count: labels.filter((l) => l === worst).length, of: labels.length }
}
