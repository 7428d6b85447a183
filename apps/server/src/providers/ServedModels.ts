import type { EmbeddingProvider } from "@switchyard/core"
import type { Task } from "@switchyard/core/catalog/Catalog"
import { Data, type Duration, Effect, Schema } from "effect"
import type { HttpClient, HttpClientError } from "effect/http"
import { serverGet } from "./UpstreamHttp.ts"

/**
 * What a self-hosted server says it serves, read from its own listing route:
 *
 * - Text Embeddings Inference: `GET /info`, one model (`model_id`), its kind (`model_type`:
 *   `embedding`, `reranker` or `classifier`), `max_client_batch_size` and `max_input_length`.
 * - Infinity: `GET /models`, each model with its `capabilities` (`embed`, `rerank`, …).
 * - Ollama: `GET /api/tags`, the models pulled (`name`); which of them embed, only an answer says.
 * - vLLM: `GET /v1/models`, the model served (`id`, `max_model_len`); its task, only an answer says.
 *
 * A model whose task the listing does not give has `task` absent: the discovery asks it.
 */
export interface Listed {
  readonly id: string
  readonly task?: Task
  readonly max_batch_items?: number
  readonly max_input_tokens?: number
}

const TeiInfo = Schema.Struct({
  model_id: Schema.String,
  model_type: Schema.Struct({
    embedding: Schema.optionalKey(Schema.Unknown),
    reranker: Schema.optionalKey(Schema.Unknown),
    classifier: Schema.optionalKey(Schema.Unknown)
  }),
  max_client_batch_size: Schema.optionalKey(Schema.Int),
  max_input_length: Schema.optionalKey(Schema.Int)
})

const InfinityModels = Schema.Struct({
  data: Schema.Array(Schema.Struct({ id: Schema.String, capabilities: Schema.optionalKey(Schema.Array(Schema.String)) }))
})

const OllamaTags = Schema.Struct({ models: Schema.Array(Schema.Struct({ name: Schema.String })) })

const VllmModels = Schema.Struct({
  data: Schema.Array(Schema.Struct({ id: Schema.String, max_model_len: Schema.optionalKey(Schema.NullOr(Schema.Int)) }))
})

const positive = (n: number | null | undefined) => (n !== undefined && n !== null && n > 0 ? n : undefined)

const teiTask = (type: typeof TeiInfo.Type["model_type"]): Task | undefined =>
  type.embedding !== undefined ? "embeddings" : type.reranker !== undefined ? "rerank" : undefined

const infinityTask = (capabilities: ReadonlyArray<string> | undefined): Task | "none" | undefined =>
  capabilities === undefined
    ? undefined
    : capabilities.includes("embed")
    ? "embeddings"
    : capabilities.includes("rerank")
    ? "rerank"
    : "none"

/** A server's listing route and how its answer reads. */
export interface Listing {
  readonly path: string
  readonly read: (json: unknown) => Effect.Effect<ReadonlyArray<Listed>, Schema.SchemaError>
}

/** Text Embeddings Inference's listing. */
export const tei: Listing = {
  path: "/info",
  read: (json: unknown) =>
    Schema.decodeUnknownEffect(TeiInfo)(json).pipe(Effect.map((info): ReadonlyArray<Listed> => {
      const task = teiTask(info.model_type)
      if (task === undefined) return []
      const batch = positive(info.max_client_batch_size)
      const tokens = positive(info.max_input_length)
      return [{
        id: info.model_id,
        task,
        ...(batch !== undefined && task === "embeddings" ? { max_batch_items: batch } : {}),
        ...(tokens !== undefined ? { max_input_tokens: tokens } : {})
      }]
    }))
}

/** Infinity's listing. */
export const infinity: Listing = {
  path: "/models",
  read: (json: unknown) =>
    Schema.decodeUnknownEffect(InfinityModels)(json).pipe(Effect.map((list) =>
      list.data.flatMap((m): ReadonlyArray<Listed> => {
        const task = infinityTask(m.capabilities)
        return task === "none" ? [] : [{ id: m.id, ...(task !== undefined ? { task } : {}) }]
      })
    ))
}

/** Ollama's listing. */
export const ollama: Listing = {
  path: "/api/tags",
  read: (json: unknown) =>
    Schema.decodeUnknownEffect(OllamaTags)(json).pipe(Effect.map((tags) => tags.models.map((m): Listed => ({ id: m.name }))))
}

/** vLLM's listing. */
export const vllm: Listing = {
  path: "/v1/models",
  read: (json: unknown) =>
    Schema.decodeUnknownEffect(VllmModels)(json).pipe(Effect.map((list) =>
      list.data.map((m): Listed => {
        const tokens = positive(m.max_model_len)
        return { id: m.id, ...(tokens !== undefined ? { max_input_tokens: tokens } : {}) }
      })
    ))
}

/** The answer of a listing route that could not be read: the reason, for the log. */
class ListingFailed extends Data.TaggedError("ListingFailed")<{ readonly reason: string }> {}

/**
 * The models one replica of a server lists (`connection.baseUrl`), with its key and headers as
 * its other routes take them, within `timeout`.
 */
export const list = (
  client: HttpClient.HttpClient,
  listing: Listing,
  connection: EmbeddingProvider.Connection,
  timeout: Duration.Input
): Effect.Effect<ReadonlyArray<Listed>, ListingFailed> => {
  const request = serverGet(connection, listing.path)
  return client.execute(request).pipe(
    Effect.flatMap((response): Effect.Effect<unknown, ListingFailed | HttpClientError.HttpClientError> =>
      response.status >= 200 && response.status < 300
        ? response.json
        : Effect.fail(new ListingFailed({ reason: `GET ${listing.path} answered ${response.status}` }))
    ),
    Effect.flatMap(listing.read),
    Effect.mapError((error) => error instanceof ListingFailed ? error : new ListingFailed({ reason: `GET ${listing.path}: ${error.message}` })),
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => Effect.fail(new ListingFailed({ reason: `GET ${listing.path} did not answer in time` }))
    })
  )
}
