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
import * as OutputDtype from "../vectors/OutputDtype.ts"
import * as LongInputs from "./LongInputs.ts"
import * as Cost from "./Cost.ts"
import * as Money from "./Money.ts"

/**
 * What the listing needs besides the catalog.
 *
 * @since 0.1.0
 */
export interface ListOptions {
  /** Whether the endpoint serves the caller: its provider is active (and the caller's settings allow it). */
  readonly isActive: (provider: Provider, endpoint: Endpoint) => boolean
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  /** Path (and query) the `links.next` URL is built on; default `/api/v1/embeddings/models`. */
  readonly path?: string | undefined
  /** Which models: those of `embeddings` endpoints (the default), of `rerank` ones, or both. */
  readonly tasks?: ReadonlyArray<Task> | undefined
}

/**
 * The tasks an `output_modalities` filter names: a comma-separated list of `embeddings` and
 * `rerank`, or `all`; absent, `embeddings`. Other names (OpenRouter's `text`, `image`...) match
 * no model here.
 *
 * @since 0.4.0
 */
export const tasksOf = (outputModalities: string | undefined): ReadonlyArray<Task> => {
  if (outputModalities === undefined) return ["embeddings"]
  const asked = outputModalities.split(",")
  return asked.includes("all") ? allTasks : allTasks.filter((task) => asked.includes(task))
}

const allTasks: ReadonlyArray<Task> = ["embeddings", "rerank"]

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
    links: { details: `/api/v1/models/${id}/endpoints` },
    ...(task === "embeddings" ? embeddingsFacts(endpoints, context) : {})
  }
}

// A model's vector options: its width, its Matryoshka widths, the types any answer can have.
const embeddingsFacts = (endpoints: ReadonlyArray<Endpoint>, context: ReadonlyArray<number>) => {
  const matryoshka = endpoints.find((e) => e.matryoshka !== undefined)?.matryoshka
  return {
    max_input_tokens: context.length === 0 ? null : Math.max(...context),
    dimensions: Math.max(0, ...endpoints.map((e) => e.dimensions ?? 0)),
    ...(matryoshka !== undefined ? { matryoshka } : {}),
    output_dtypes: OutputDtype.all
  }
}

/**
 * What an embeddings endpoint's record in the endpoints list says of its vectors: its limit, its
 * Matryoshka widths, the types its provider makes natively and the ends it cuts natively.
 *
 * @since 0.12.0
 */
export const vectorOptionsOf = (provider: Provider, endpoint: Endpoint) =>
  endpoint.task !== "embeddings" ? {} : {
    max_input_tokens: endpoint.max_input_tokens ?? null,
    ...(endpoint.matryoshka !== undefined ? { matryoshka: endpoint.matryoshka } : {}),
    output_dtypes: ["float", ...(endpoint.output_dtypes ?? [])],
    truncation: LongInputs.supportOf(provider, endpoint).cuts
  }

type Served = Array<{ readonly provider: Provider; readonly endpoint: Endpoint }>

// Every model the options select, by id (then task, for an id served for both).
const records = (catalog: Catalog, options: Pick<ListOptions, "isActive" | "tasks">): ReadonlyArray<EmbeddingModel> => {
  const tasks = options.tasks ?? ["embeddings"]
  const byModel = new Map<string, { readonly id: string; readonly task: Task; readonly served: Served }>()
  for (const provider of catalog.providers) {
    for (const endpoint of provider.endpoints) {
      if (!tasks.includes(endpoint.task) || !options.isActive(provider, endpoint)) continue
      const id = endpoint.model.toLowerCase()
      const key = `${id} ${endpoint.task}`
      const entry = byModel.get(key)
      if (entry === undefined) byModel.set(key, { id, task: endpoint.task, served: [{ provider, endpoint }] })
      else entry.served.push({ provider, endpoint })
    }
  }
  return [...byModel.keys()].sort().map((key) => {
    const { id, task, served } = byModel.get(key)!
    return describe(id, served, task)
  })
}

/**
 * The model of that id (any case) the options select, if any, of whichever task.
 *
 * @since 0.4.0
 */
export const find = (
  catalog: Catalog,
  id: string,
  options: Pick<ListOptions, "isActive">
): EmbeddingModel | undefined => {
  const wanted = id.toLowerCase()
  return records(catalog, {
    ...options,
    tasks: allTasks,
    isActive: (provider, endpoint) => endpoint.model.toLowerCase() === wanted && options.isActive(provider, endpoint)
  })[0]
}

/**
 * Lists the models of the tasks asked for (embeddings by default) the active providers serve, one
 * page at a time, sorted by id. A rerank model's record names `rerank` as its output modality, as OpenRouter's does.
 *
 * @since 0.1.0
 */
export const list = (catalog: Catalog, options: ListOptions): EmbeddingModelList => {
  const all = records(catalog, options)
  const limit = Math.min(Math.max(1, options.limit ?? maxPageSize), maxPageSize)
  const offset = Math.max(0, options.offset ?? 0)
  const data = all.slice(offset, offset + limit)
  const nextOffset = offset + data.length
  const path = options.path ?? "/api/v1/embeddings/models"
  return {
    data,
    links: { next: nextOffset < all.length ? `${path}${path.includes("?") ? "&" : "?"}offset=${nextOffset}&limit=${limit}` : null },
    total_count: all.length
  }
}
