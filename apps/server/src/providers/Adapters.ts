import type { EmbeddingProvider } from "@switchyard/core"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import { Context, Effect, Layer, type Redacted, Schema } from "effect"
import * as Cohere from "./Cohere.ts"
import * as Gemini from "./Gemini.ts"
import * as Local from "./Local.ts"
import * as OpenAiCompatible from "./OpenAiCompatible.ts"
import * as Voyage from "./Voyage.ts"

export const AdapterId = Schema.Literals(["openai", "cohere", "voyage", "gemini", "local"])

export type AdapterId = typeof AdapterId.Type

/**
 * An adapter: the port, and `forward` when it can hand vectors back in the upstream's own bytes.
 */
export type Adapter = EmbeddingProvider.EmbeddingProvider["Service"] & {
  readonly forward?: OpenAiCompatible.ForwardingProvider["forward"]
}

export type AdapterTable = Readonly<Record<AdapterId, Adapter>>

export const defaultBaseUrls: Readonly<Record<AdapterId, string>> = {
  openai: OpenAiCompatible.dialects.generic.baseUrl,
  cohere: Cohere.baseUrl,
  voyage: Voyage.baseUrl,
  gemini: Gemini.baseUrl,
  local: "local:"
}

export const make = Effect.gen(function*() {
  const table: AdapterTable = {
    openai: yield* OpenAiCompatible.make(),
    cohere: yield* Cohere.make,
    voyage: yield* Voyage.make,
    gemini: yield* Gemini.make,
    local: Local.make()
  }
  return table
})

export class Adapters extends Context.Service<Adapters, AdapterTable>()("@switchyard/server/providers/Adapters") {
  static readonly layer = Layer.effect(Adapters, make)
}

// The catalog provider's fields that say how to reach it, under the config file's names.
export interface ProviderAccess {
  readonly adapter: AdapterId
  readonly dialect?: Catalog.Dialect | undefined
  readonly base_url?: string | null | undefined
  readonly api_key_env?: string | null | undefined
  readonly headers?: Readonly<Record<string, string>> | null | undefined
}

/**
 * How to reach a provider with a credential already in hand.
 */
export const connectionOf = (
  provider: ProviderAccess,
  apiKey: Redacted.Redacted<string> | undefined,
  timeoutMs: number
): EmbeddingProvider.Connection => ({
  baseUrl: provider.base_url ?? defaultBaseUrls[provider.adapter],
  apiKey,
  ...(provider.headers ? { headers: provider.headers } : {}),
  ...(provider.dialect !== undefined ? { dialect: provider.dialect } : {}),
  timeoutMs
})
