import type { EmbeddingProvider } from "@switchyard/core"
import type { RerankProvider } from "@switchyard/core/providers/RerankProvider"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import * as Bedrock from "./Bedrock.ts"
import * as Azure from "./Azure.ts"
import * as Cohere from "./Cohere.ts"
import * as Gemini from "./Gemini.ts"
import * as InfinityServer from "./Infinity.ts"
import * as Jina from "./Jina.ts"
import * as Local from "./Local.ts"
import * as Ollama from "./Ollama.ts"
import * as OpenAiCompatible from "./OpenAiCompatible.ts"
import * as Tei from "./Tei.ts"
import type * as Tokenizers from "./Tokenizers.ts"
import * as Vertex from "./Vertex.ts"
import * as Vllm from "./Vllm.ts"
import * as Voyage from "./Voyage.ts"

export const AdapterId = Schema.Literals(["openai", "cohere", "voyage", "gemini", "jina", "local", "bedrock", "tei", "ollama", "azure", "vertex", "infinity", "vllm"])

export type AdapterId = typeof AdapterId.Type

/**
 * An adapter: the embeddings port, `forward` when it can hand vectors back in the upstream's own
 * bytes, `rerank` when its wire format has a rerank API, and `tokenize` when its server counts a
 * model's tokens for the gateway (TEI's `/tokenize`).
 */
type Adapter = EmbeddingProvider.EmbeddingProvider["Service"] & {
  readonly forward?: OpenAiCompatible.ForwardingProvider["forward"]
  readonly rerank?: RerankProvider["rerank"]
  readonly tokenize?: (
    connection: EmbeddingProvider.Connection,
    upstreamModel: string,
    texts: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<Tokenizers.ServerToken>>, UpstreamError.UpstreamError>
}

export type AdapterTable = Readonly<Record<AdapterId, Adapter>>

export const defaultBaseUrls: Readonly<Record<AdapterId, string>> = {
  openai: OpenAiCompatible.dialects.generic.baseUrl,
  cohere: Cohere.baseUrl,
  voyage: Voyage.baseUrl,
  gemini: Gemini.baseUrl,
  jina: Jina.baseUrl,
  local: "local:",
  bedrock: Bedrock.baseUrlOf("us-east-1"),
  tei: Tei.baseUrl,
  ollama: Ollama.baseUrl,
  // An Azure OpenAI resource has its own host: its config names it.
  azure: "https://invalid.openai.azure.com",
  vertex: Catalog.vertexBaseUrl("us-central1"),
  infinity: InfinityServer.baseUrl,
  vllm: Vllm.baseUrl
}

export const make = Effect.gen(function*() {
  const openai = yield* OpenAiCompatible.make()
  // OpenAI-compatible hosts that rerank (vLLM, Text Embeddings Inference...) speak Jina's shape.
  const jinaRerank = (yield* Jina.makeRerank).rerank
  const table: AdapterTable = {
    openai: { ...openai, rerank: jinaRerank },
    cohere: { ...(yield* Cohere.make), rerank: (yield* Cohere.makeRerank).rerank },
    voyage: { ...(yield* Voyage.make), rerank: (yield* Voyage.makeRerank).rerank },
    gemini: yield* Gemini.make,
    // Jina's embeddings API is OpenAI-compatible in Jina's dialect.
    jina: {
      embed: (connection, request) => openai.embed({ ...connection, dialect: "jina" }, request),
      forward: (connection, request) => openai.forward({ ...connection, dialect: "jina" }, request),
      rerank: jinaRerank
    },
    local: { ...Local.make(), rerank: Local.makeRerank().rerank },
    bedrock: yield* Bedrock.make(),
    tei: { ...(yield* Tei.make), rerank: (yield* Tei.makeRerank).rerank },
    ollama: yield* Ollama.make,
    azure: yield* Azure.make,
    vertex: { ...(yield* Vertex.make), rerank: (yield* Vertex.makeRerank).rerank },
    infinity: yield* InfinityServer.make,
    vllm: yield* Vllm.make
  }
  return table
})

export class Adapters extends Context.Service<Adapters, AdapterTable>()("@switchyard/server/providers/Adapters") {
  static readonly layer = Layer.effect(Adapters, make)
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

// Azure's placement and identity, Vertex's project, location, hosts and identity.
const cloudOf = (provider: ProviderAccess): Partial<EmbeddingProvider.Connection> => {
  switch (provider.adapter) {
    case "azure":
      return {
        ...(provider.api_version !== undefined ? { apiVersion: provider.api_version } : {}),
        ...(provider.auth === "entra" ? { identity: { kind: "entra" } } : {})
      }
    case "vertex":
      return {
        ...(provider.project !== undefined ? { project: provider.project } : {}),
        ...(provider.location !== undefined ? { location: provider.location } : {}),
        rankingBaseUrl: provider.base_url ?? Vertex.rankingBaseUrl,
        identity: {
          kind: "google",
          ...(provider.credentials_file !== undefined ? { credentialsFile: provider.credentials_file } : {})
        }
      }
    default:
      return {}
  }
}

const baseUrlOf = (provider: ProviderAccess): string =>
  provider.base_url ?? provider.base_urls?.[0] ??
    (provider.adapter === "vertex" && provider.location !== undefined
      ? Catalog.vertexBaseUrl(provider.location)
      : provider.adapter === "bedrock" && provider.region !== undefined
      ? Bedrock.baseUrlOf(provider.region)
      : defaultBaseUrls[provider.adapter])

const batchOf = (placement: Catalog.BatchPlacement): NonNullable<EmbeddingProvider.Connection["batch"]> => ({
  ...(placement.s3_uri !== undefined ? { s3Uri: placement.s3_uri } : {}),
  ...(placement.role_arn !== undefined ? { roleArn: placement.role_arn } : {}),
  ...(placement.gcs_uri !== undefined ? { gcsUri: placement.gcs_uri } : {}),
  ...(placement.base_url !== undefined ? { baseUrl: placement.base_url } : {}),
  ...(placement.storage_url !== undefined ? { storageUrl: placement.storage_url } : {})
})

// The last connection made for each provider: its credential rarely changes, so an attempt
// reuses it instead of building one.
const connections = new WeakMap<ProviderAccess, EmbeddingProvider.Connection>()

/**
 * How to reach a provider with a credential already in hand.
 */
export const connectionOf = (
  provider: ProviderAccess,
  apiKey: Redacted.Redacted<string> | undefined
): EmbeddingProvider.Connection => {
  const known = connections.get(provider)
  if (known !== undefined && known.apiKey === apiKey) return known
  const connection: EmbeddingProvider.Connection = {
    ...(provider.slug !== undefined ? { provider: provider.slug } : {}),
    baseUrl: baseUrlOf(provider),
    apiKey,
    ...cloudOf(provider),
    ...(provider.headers ? { headers: provider.headers } : {}),
    ...(provider.dialect !== undefined ? { dialect: provider.dialect } : {}),
    ...(provider.region !== undefined ? { region: provider.region } : {}),
    ...(provider.batch !== undefined ? { batch: batchOf(provider.batch) } : {})
  }
  connections.set(provider, connection)
  return connection
}

const secretHeader = /auth|key|token|secret|signature|cookie|password/iu

const secretsOf = (connection: EmbeddingProvider.Connection): ReadonlyArray<string> =>
  [
    ...(connection.apiKey === undefined ? [] : [Redacted.value(connection.apiKey)]),
    ...Object.entries(connection.headers ?? {}).filter(([name]) => secretHeader.test(name)).map(([, value]) => value)
  ].filter((secret) => secret.length >= 4)

const cleaned = (text: string, secrets: ReadonlyArray<string>) => secrets.reduce((out, secret) => out.split(secret).join("[redacted]"), text)

/**
 * Text an upstream answered (its id of the answer, kept in the ledger) with this connection's
 * credentials taken out, as {@link scrub} does for failures: a provider that echoes what it was
 * sent must not put a credential at rest.
 */
export const scrubText = (text: string, connection: EmbeddingProvider.Connection): string => cleaned(text, secretsOf(connection))

/**
 * A failure with this connection's credentials taken out of every string. Providers quote the
 * credential they were sent in their error messages ("Incorrect API key provided: ..."), and
 * pattern-based redaction misses keys without a known prefix.
 */
export const scrub = (error: UpstreamError.UpstreamError, connection: EmbeddingProvider.Connection): UpstreamError.UpstreamError => {
  const secrets = secretsOf(connection)
  if (secrets.length === 0) return error
  const reason = error.reason
  const clean = (text: string) => cleaned(text, secrets)
  const fields = Object.fromEntries(
    Object.entries(reason).map(([key, value]) => [key, typeof value === "string" && key !== "_tag" ? clean(value) : value])
  )
  return UpstreamError.of(Object.assign(Object.create(Object.getPrototypeOf(reason)), fields) as UpstreamError.Reason)
}
