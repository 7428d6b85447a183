import type { Switchyard } from "@switchyard/client/Switchyard"
import type { EndpointRecord } from "@switchyard/core/schema/ProviderListing"

export interface ServedEndpoint extends EndpointRecord {
  /** The model the endpoint serves, as requests name it. */
  readonly model: string
}

/**
 * Every endpoint of every model the gateway serves, with its measured figures
 * (`GET /models/{author}/{slug}/endpoints` for each model of `GET /embeddings/models`).
 */
export const load = async (client: Switchyard, signal?: AbortSignal): Promise<ReadonlyArray<ServedEndpoint>> => {
  const options = signal === undefined ? undefined : { signal }
  const [embeddings, rerank] = await Promise.all([
    client.embeddings.listModels({ query: {} }, options),
    client.rerank.listModels({ query: {} }, options)
  ])
  const models = [...embeddings.data, ...rerank.data]
  const pages = await Promise.all(models.map((model) => {
    const [author = "", ...rest] = model.id.split("/")
    return client.providers.endpoints({ params: { author, slug: rest.join("/") } }, options)
  }))
  return pages.flatMap((page) => page.data.endpoints.map((endpoint) => ({ ...endpoint, model: page.data.id })))
}

/**
 * The endpoint's state in words: `status` is 0 when it serves, negative when it failed in the
 * last 30 s, -10 when its provider is not active (no credentials).
 */
export const statusLabel = (endpoint: Pick<EndpointRecord, "status" | "active">): "healthy" | "failed recently" | "inactive" =>
  !endpoint.active || endpoint.status <= -10 ? "inactive" : endpoint.status < 0 ? "failed recently" : "healthy"

/**
 * The share of calls that failed, from an uptime in percent; `undefined` without calls.
 */
export const errorRate = (uptime: number | null): number | undefined => (uptime === null ? undefined : (100 - uptime) / 100)
