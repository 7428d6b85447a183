import type { EmbeddingProvider } from "@switchyard/core"
import * as Registry from "@switchyard/core/adapters/Registry"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Context, Effect, Layer, Redacted } from "effect"
import * as Jina from "./Jina.ts"
import * as OpenAiCompatible from "./OpenAiCompatible.ts"
import { type Adapter, type ProviderAccess, wireFormats } from "./WireFormats.ts"

export type { ProviderAccess } from "./WireFormats.ts"

export type AdapterTable = Readonly<Record<Registry.AdapterId, Adapter>>

/** Where each adapter is reached when its config names no host: its module's default. */
export const defaultBaseUrls: Readonly<Record<Registry.AdapterId, string>> = Object.fromEntries(
  Registry.modules.map((module) => [module.id, module.baseUrl.default])
) as Record<Registry.AdapterId, string>

/** Every adapter, made once from its wire formats (WireFormats.ts). */
export const make = Effect.gen(function*() {
  const openai = yield* OpenAiCompatible.make()
  const shared = { openai, jinaRerank: (yield* Jina.makeRerank).rerank }
  const table: Partial<Record<Registry.AdapterId, Adapter>> = {}
  for (const id of Registry.adapterIds) table[id] = yield* wireFormats[id].make(shared)
  return table as AdapterTable
})

export class Adapters extends Context.Service<Adapters, AdapterTable>()("@switchyard/server/providers/Adapters") {
  static readonly layer = Layer.effect(Adapters, make)
}

const baseUrlOf = (provider: ProviderAccess): string =>
  provider.base_url ?? provider.base_urls?.[0] ?? wireFormats[provider.adapter].placedBaseUrl?.(provider) ??
    defaultBaseUrls[provider.adapter]

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
    ...wireFormats[provider.adapter].connection?.(provider),
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
