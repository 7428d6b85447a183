import type { EmbeddingProvider } from "@switchyard/core"
import type { AdapterId } from "@switchyard/core/adapters/Registry"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import type { RerankProvider } from "@switchyard/core/providers/RerankProvider"
import type * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect } from "effect"
import type { HttpClient } from "effect/http"
import * as Azure from "./Azure.ts"
import * as Bedrock from "./Bedrock.ts"
import * as Cohere from "./Cohere.ts"
import * as Gemini from "./Gemini.ts"
import * as InfinityServer from "./Infinity.ts"
import * as Local from "./Local.ts"
import * as Ollama from "./Ollama.ts"
import type * as OpenAiCompatible from "./OpenAiCompatible.ts"
import * as ServedModels from "./ServedModels.ts"
import * as Tei from "./Tei.ts"
import type * as Tokenizers from "./Tokenizers.ts"
import * as Vertex from "./Vertex.ts"
import * as Vllm from "./Vllm.ts"
import * as Voyage from "./Voyage.ts"

/**
 * The server's half of each provider module: what core's `adapters/modules/<id>.ts` declares as
 * data, this table gives as wire formats, keyed by the registry's ids (an adapter missing here is
 * a type error): how its adapter is made (embeddings, and rerank or `tokenize` where it has them),
 * how its connection is placed (a cloud's region, location and identity), and for a self-hosted
 * server its listing route and health probe. Batch APIs are keyed by core's `BatchApi`
 * (`ProviderBatchApis.ts`). `test/providers/WireFormats.test.ts` checks each entry against its
 * module's kind.
 */

/**
 * An adapter: the embeddings port, `forward` when it can hand vectors back in the upstream's own
 * bytes, `rerank` when its wire format has a rerank API, and `tokenize` when its server counts a
 * model's tokens for the gateway (TEI's `/tokenize`).
 */
export type Adapter = EmbeddingProvider.EmbeddingProvider["Service"] & {
  readonly forward?: OpenAiCompatible.ForwardingProvider["forward"]
  readonly rerank?: RerankProvider["rerank"]
  readonly tokenize?: (
    connection: EmbeddingProvider.Connection,
    upstreamModel: string,
    texts: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<Tokenizers.ServerToken>>, UpstreamError.UpstreamError>
}

// The catalog provider's fields that say how to reach it, under the config file's names.
export interface ProviderAccess {
  readonly slug?: string | undefined
  readonly adapter: AdapterId
  readonly dialect?: Catalog.Dialect | undefined
  readonly base_url?: string | null | undefined
  /** Replicas of one self-hosted server; a call picks one (Replicas.ts), the first stands for all. */
  readonly base_urls?: ReadonlyArray<string> | undefined
  readonly api_key_env?: string | null | undefined
  readonly headers?: Readonly<Record<string, string>> | null | undefined
  readonly region?: string | undefined
  readonly api_version?: string | undefined
  readonly auth?: "entra" | undefined
  readonly project?: string | undefined
  readonly location?: string | undefined
  readonly credentials_file?: string | undefined
  /** Where a Bedrock or Vertex provider's batch API keeps its files. */
  readonly batch?: Catalog.BatchPlacement | undefined
}

/** What the adapters made once share: the OpenAI-compatible adapter and Jina's rerank. */
interface Shared {
  readonly openai: Effect.Success<ReturnType<typeof OpenAiCompatible.make>>
  readonly jinaRerank: RerankProvider["rerank"]
}

/** A self-hosted server's own routes: what it serves, and whether it is up. */
export interface Server {
  readonly listing: ServedModels.Listing
  /** The route it answers 2xx on when it is up. */
  readonly healthPath: string
}

/**
 * One adapter's wire formats.
 */
export interface WireFormatModule {
  readonly make: (shared: Shared) => Effect.Effect<Adapter, never, HttpClient.HttpClient>
  /** Its host when the config names no `base_url` but names where it runs (Bedrock's region, Vertex's location). */
  readonly placedBaseUrl?: ((provider: ProviderAccess) => string | undefined) | undefined
  /** What its connection carries beyond the common fields (Azure's api-version and identity, Vertex's project and identity). */
  readonly connection?: ((provider: ProviderAccess) => Partial<EmbeddingProvider.Connection>) | undefined
  readonly server?: Server | undefined
}

const withRerank = <A extends Adapter>(adapter: Effect.Effect<A, never, HttpClient.HttpClient>, rerank: Effect.Effect<RerankProvider, never, HttpClient.HttpClient>) =>
  Effect.zipWith(adapter, rerank, (embed, reranker): Adapter => ({ ...embed, rerank: reranker.rerank }))

/**
 * Every adapter's wire formats, by the registry's ids.
 */
export const wireFormats: { readonly [Id in AdapterId]: WireFormatModule } = {
  // OpenAI-compatible hosts that rerank (vLLM, Text Embeddings Inference...) speak Jina's shape.
  openai: { make: ({ openai, jinaRerank }) => Effect.succeed({ ...openai, rerank: jinaRerank }) },
  cohere: { make: () => withRerank(Cohere.make, Cohere.makeRerank) },
  voyage: { make: () => withRerank(Voyage.make, Voyage.makeRerank) },
  gemini: { make: () => Gemini.make },
  // Jina's embeddings API is OpenAI-compatible in Jina's dialect.
  jina: {
    make: ({ openai, jinaRerank }) =>
      Effect.succeed({
        embed: (connection, request) => openai.embed({ ...connection, dialect: "jina" }, request),
        forward: (connection, request) => openai.forward({ ...connection, dialect: "jina" }, request),
        rerank: jinaRerank
      })
  },
  local: { make: () => Effect.succeed({ ...Local.make(), rerank: Local.makeRerank().rerank }) },
  bedrock: {
    make: () => Bedrock.make(),
    placedBaseUrl: (provider) => provider.region !== undefined ? Bedrock.baseUrlOf(provider.region) : undefined
  },
  tei: {
    make: () => withRerank(Tei.make, Tei.makeRerank),
    server: { listing: ServedModels.tei, healthPath: "/health" }
  },
  // Ollama's root answers too, but says nothing of the API.
  ollama: { make: () => Ollama.make, server: { listing: ServedModels.ollama, healthPath: "/api/version" } },
  azure: {
    make: () => Azure.make,
    connection: (provider) => ({
      ...(provider.api_version !== undefined ? { apiVersion: provider.api_version } : {}),
      ...(provider.auth === "entra" ? { identity: { kind: "entra" } } : {})
    })
  },
  vertex: {
    make: () => withRerank(Vertex.make, Vertex.makeRerank),
    placedBaseUrl: (provider) => provider.location !== undefined ? Catalog.vertexBaseUrl(provider.location) : undefined,
    connection: (provider) => ({
      ...(provider.project !== undefined ? { project: provider.project } : {}),
      ...(provider.location !== undefined ? { location: provider.location } : {}),
      rankingBaseUrl: provider.base_url ?? Vertex.rankingBaseUrl,
      identity: {
        kind: "google",
        ...(provider.credentials_file !== undefined ? { credentialsFile: provider.credentials_file } : {})
      }
    })
  },
  infinity: { make: () => InfinityServer.make, server: { listing: ServedModels.infinity, healthPath: "/health" } },
  vllm: { make: () => Vllm.make, server: { listing: ServedModels.vllm, healthPath: "/health" } }
}

/** A self-hosted server's own routes, `undefined` for an adapter that is none. */
export const serverOf = (adapter: AdapterId): Server | undefined => wireFormats[adapter].server
