/**
 * The `GET /embeddings/models` body, computed from the catalog.
 *
 * **Details**
 *
 * One entry per model that at least one active provider serves, sorted by id. The price shown
 * is the cheapest active endpoint's, per token as OpenRouter publishes it; `context_length` is
 * the largest `max_input_tokens` of the active endpoints; `supported_parameters` is the union.
 *
 * @since 0.1.0
 */
import type { EmbeddingModel, EmbeddingModelList } from "../schema/EmbeddingResponse.ts"
import { maxPageSize } from "../schema/EmbeddingResponse.ts"
import type { Catalog, Endpoint, Provider, Task } from "./Catalog.ts"
import { inputModalitiesOf } from "./Catalog.ts"
import * as Cost from "./Cost.ts"
import * as Money from "./Money.ts"

/**
 * What the listing needs besides the catalog.
 *
 * @since 0.1.0
 */
export interface ListOptions {
  readonly isActive: (provider: Provider) => boolean
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  /** Path the `links.next` URL is built on; default `/api/v1/embeddings/models`. */
  readonly path?: string | undefined
  /** Which models: those of `embeddings` endpoints (the default) or of `rerank` ones. */
  readonly task?: Task | undefined
}

const publicModalities = new Set(["text", "image", "audio", "video", "file"])

const describe = (
  id: string,
  served: ReadonlyArray<{ readonly provider: Provider; readonly endpoint: Endpoint }>,
  task: Task
): EmbeddingModel => {
  const endpoints = served.map((s) => s.endpoint)
  const cheapest = [...endpoints].sort((a, b) =>
    Money.compare(a.pricing.prompt, b.pricing.prompt) || Money.compare(a.pricing.search, b.pricing.search)
  )[0]!
  const inputs = [...new Set(served.flatMap((s) => inputModalitiesOf(s.provider, s.endpoint)))]
    .map((m) => (m === "tokens" ? "text" : m))
    .filter((m, i, all) => publicModalities.has(m) && all.indexOf(m) === i)
  const context = endpoints.map((e) => e.max_input_tokens).filter((n): n is number => n !== undefined)
  const named = endpoints.find((e) => e.name !== undefined)
  const described = endpoints.find((e) => e.description !== undefined)
  const hf = endpoints.find((e) => e.hugging_face_id !== undefined)
  return {
    id,
    canonical_slug: id,
    name: named?.name ?? id,
    created: Math.max(0, ...endpoints.map((e) => e.created ?? 0)),
    ...(described?.description !== undefined ? { description: described.description } : {}),
    context_length: context.length === 0 ? null : Math.max(...context),
    hugging_face_id: hf?.hugging_face_id ?? null,
    architecture: {
      modality: `${inputs.join("+")}->${task}`,
      input_modalities: inputs,
      output_modalities: [task]
    },
    pricing: {
      prompt: Cost.perToken(cheapest.pricing.prompt),
      completion: Cost.perToken(cheapest.pricing.completion),
      request: cheapest.pricing.request,
      image: cheapest.pricing.image,
      audio: cheapest.pricing.audio,
      ...(Money.toAtto(cheapest.pricing.search) > 0n
        ? { search: Money.toDecimal(Money.toAtto(cheapest.pricing.search) / 1000n) }
        : {})
    },
    top_provider: {
      context_length: cheapest.max_input_tokens ?? null,
      max_completion_tokens: null,
      is_moderated: false
    },
    per_request_limits: null,
    supported_parameters: [...new Set(endpoints.flatMap((e) => e.supported_parameters))].sort(),
    supported_voices: null,
    default_parameters: null,
    links: { details: `/api/v1/models/${id}/endpoints` }
  }
}

/**
 * Lists the models of one task (embeddings by default) the active providers serve, one page at a
 * time. A rerank model's record names `rerank` as its output modality, as OpenRouter's does.
 *
 * @since 0.1.0
 */
export const list = (catalog: Catalog, options: ListOptions): EmbeddingModelList => {
  const task = options.task ?? "embeddings"
  const byModel = new Map<string, Array<{ readonly provider: Provider; readonly endpoint: Endpoint }>>()
  for (const provider of catalog.providers) {
    if (!options.isActive(provider)) continue
    for (const endpoint of provider.endpoints) {
      if (endpoint.task !== task) continue
      const id = endpoint.model.toLowerCase()
      const list = byModel.get(id)
      if (list === undefined) byModel.set(id, [{ provider, endpoint }])
      else list.push({ provider, endpoint })
    }
  }
  const all = [...byModel.keys()].sort().map((id) => describe(id, byModel.get(id)!, task))
  const limit = Math.min(Math.max(1, options.limit ?? maxPageSize), maxPageSize)
  const offset = Math.max(0, options.offset ?? 0)
  const data = all.slice(offset, offset + limit)
  const nextOffset = offset + data.length
  const path = options.path ?? "/api/v1/embeddings/models"
  return {
    data,
    links: { next: nextOffset < all.length ? `${path}?offset=${nextOffset}&limit=${limit}` : null },
    total_count: all.length
  }
}
