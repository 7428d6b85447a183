/**
 * The endpoints of a self-hosted provider's discovered models (`"discover": true`): what the
 * server lists (its model ids, each with its task, and its width once one answer showed it) made
 * into catalog endpoints beside the ones listed by hand.
 *
 * **Details**
 *
 * - The public id is `models[<server id>]` when the provider maps it, else `<slug>/<server id>`.
 * - The price is the provider's `default_pricing` (absent: free).
 * - An embeddings model needs its width (`dimensions`); one not known yet is left out until it is.
 * - An endpoint listed by hand for the same public id (any variant) wins: discovery never changes
 *   what an operator wrote.
 * - A server id that makes no valid model id is left out and named in `skipped`.
 * - A model known to be Matryoshka (Nomic's nomic-embed-text-v1.5, under its Hugging Face id or
 *   Ollama's tag) gets its widths (`matryoshka`), so the gateway cuts its vectors to a width asked.
 *
 * @since 0.11.0
 */
import { Option, Schema } from "effect"
import { Endpoint, type Provider, type Task } from "./Catalog.ts"

/**
 * One model a server lists, as the gateway learned it.
 *
 * @since 0.11.0
 */
export interface ServedModel {
  /** The server's own id, sent upstream as the model. */
  readonly id: string
  readonly task: Task
  /** The vectors' width of an embeddings model (from the server's info or its first answer). */
  readonly dimensions?: number | undefined
  /** The most inputs one call may carry (TEI's `max_client_batch_size`); absent, 32. */
  readonly max_batch_items?: number | undefined
  /** The longest input in tokens the server takes, when it says. */
  readonly max_input_tokens?: number | undefined
}

/**
 * Inputs per upstream call of a discovered embeddings model whose server names no limit (TEI's
 * default `--max-client-batch-size`).
 *
 * @since 0.11.0
 */
export const defaultMaxBatchItems = 32

/** Matryoshka models a self-hosted server may serve, by a part of their server id, with their widths. */
const knownMatryoshka: ReadonlyArray<readonly [RegExp, ReadonlyArray<number>]> = [
  [/nomic-embed-text[-:]v1\.5/iu, [64, 128, 256, 512, 768]]
]

const matryoshkaOf = (serverId: string, dimensions: number | undefined) => {
  const widths = knownMatryoshka.find(([pattern]) => pattern.test(serverId))?.[1]
  return widths === undefined || dimensions === undefined ? undefined : widths.filter((w) => w <= dimensions)
}

/** The public model id a server id is served as. */
const publicIdOf = (provider: Pick<Provider, "slug" | "models">, serverId: string): string =>
  provider.models?.[serverId] ?? `${provider.slug}/${serverId}`

const decodeEndpoint = Schema.decodeUnknownOption(Endpoint)

/**
 * The endpoints of the served models, and the server ids that could not be served.
 *
 * @since 0.11.0
 */
export const endpointsOf = (
  provider: Pick<Provider, "slug" | "models" | "default_pricing" | "endpoints">,
  served: ReadonlyArray<ServedModel>
): { readonly endpoints: ReadonlyArray<Endpoint>; readonly skipped: ReadonlyArray<string> } => {
  const byHand = new Set(provider.endpoints.map((e) => e.model.toLowerCase()))
  const seen = new Set<string>()
  const endpoints: Array<Endpoint> = []
  const skipped: Array<string> = []
  for (const model of served) {
    if (model.task === "embeddings" && model.dimensions === undefined) continue
    const id = publicIdOf(provider, model.id)
    if (byHand.has(id.toLowerCase()) || seen.has(id.toLowerCase())) continue
    const endpoint = decodeEndpoint({
      model: id,
      upstream_model: model.id,
      task: model.task,
      pricing: provider.default_pricing ?? {},
      ...(model.task === "embeddings"
        ? { dimensions: model.dimensions, max_batch_items: model.max_batch_items ?? defaultMaxBatchItems }
        : {}),
      ...(model.max_input_tokens !== undefined ? { max_input_tokens: model.max_input_tokens } : {}),
      ...(model.task === "embeddings" && matryoshkaOf(model.id, model.dimensions) !== undefined
        ? { matryoshka: matryoshkaOf(model.id, model.dimensions) }
        : {})
    })
    if (Option.isNone(endpoint)) {
      skipped.push(model.id)
      continue
    }
    seen.add(id.toLowerCase())
    endpoints.push(endpoint.value)
  }
  return { endpoints, skipped }
}

/**
 * The provider with its discovered endpoints after the ones listed by hand.
 *
 * @since 0.11.0
 */
export const withDiscovered = <P extends Provider>(provider: P, served: ReadonlyArray<ServedModel>): P => {
  const { endpoints } = endpointsOf(provider, served)
  return endpoints.length === 0 ? provider : { ...provider, endpoints: [...provider.endpoints, ...endpoints] }
}
