/**
 * What each provider can do with an input longer than its model takes, as data: whether it can
 * be told to refuse rather than cut (the gateway's `truncate: "none"`), which ends it cuts
 * natively, and how the gateway counts the model's tokens exactly where it can.
 *
 * **Details**
 *
 * | adapter | told not to cut | cuts natively | the gateway counts |
 * |---|---|---|---|
 * | `openai` (OpenAI, Azure, Mistral, Together, Fireworks, DeepInfra, vLLM) | refuses by itself | no | OpenAI's models: `cl100k_base` |
 * | `jina` (or dialect `jina`) | `truncate: false` | end (`truncate: true`) | no |
 * | `cohere` | `truncate: "NONE"` | start, end (`START`, `END`) | no |
 * | `bedrock`, Cohere Embed | `truncate: "NONE"` | start, end | no |
 * | `bedrock`, Titan | refuses by itself | no | no |
 * | `voyage` | `truncation: false` | end (`truncation: true`) | no |
 * | `vertex` | `autoTruncate: false` | end (`autoTruncate: true`) | no |
 * | `gemini` | cannot be told: cuts at its limit | end | no |
 * | `tei` | `truncate: false` | start, end (`truncation_direction`) | its `/tokenize` |
 * | `ollama` | `truncate: false` | end | no |
 * | `infinity` | cannot be told | end | no |
 * | `local` | — | no | its own tokenizer |
 *
 * Where the gateway cannot count exactly it still cuts and windows within a bound that surely
 * fits: a token covers at least one UTF-8 byte of text, so `max_input_tokens` bytes (less a
 * margin for the model's special tokens) never exceed the limit (`bytes`).
 *
 * @since 0.12.0
 */
import type * as ProviderModule from "../adapters/ProviderModule.ts"
import * as Registry from "../adapters/Registry.ts"
import type { Endpoint, Provider } from "./Catalog.ts"

/**
 * How the gateway counts an endpoint's tokens: OpenAI's published encoding (`cl100k_base`),
 * the self-hosted server's own tokenizer (`server`, TEI's `/tokenize`), the in-process model's
 * (`local`), or the byte bound (`bytes`, not exact: used to cut and window, never to refuse).
 *
 * @since 0.12.0
 */
export type Counter = "cl100k_base" | "server" | "local" | "bytes"

/**
 * The models whose tokenizer is published as a tiktoken encoding, by public id.
 *
 * @since 0.12.0
 */
const encodings: Readonly<Record<string, "cl100k_base">> = {
  "openai/text-embedding-3-small": "cl100k_base",
  "openai/text-embedding-3-large": "cl100k_base",
  "openai/text-embedding-ada-002": "cl100k_base"
}

/**
 * The tokens the byte bound keeps free for a model's special tokens (`[CLS]`, `<s>`, a
 * SentencePiece word mark).
 *
 * @since 0.12.0
 */
export const byteMargin = 16

/**
 * How the gateway counts an endpoint's tokens (see {@link Counter}).
 *
 * @since 0.12.0
 */
export const counterOf = (provider: Pick<Provider, "adapter">, endpoint: Pick<Endpoint, "model">): Counter =>
  // A server that counts for itself counts what it runs, whatever public id it is served under.
  Registry.moduleOf(provider.adapter).counter ?? encodings[endpoint.model.toLowerCase()] ?? "bytes"

/**
 * Whether the count is exact (every counter but the byte bound).
 *
 * @since 0.12.0
 */
export const isExact = (counter: Counter): boolean => counter !== "bytes"

/**
 * What a provider does with a long input: `refuses` when it refuses by itself or can be told to
 * (else it cuts silently at its limit), and the ends it cuts when told to.
 *
 * @since 0.12.0
 */
export type Support = ProviderModule.Support

/**
 * A provider's long-input behaviour, as its adapter's module says.
 *
 * @since 0.12.0
 */
export const supportOf = (provider: Pick<Provider, "adapter" | "dialect">, endpoint: Pick<Endpoint, "upstream_model">): Support =>
  Registry.moduleOf(provider.adapter).longInputs(provider, endpoint.upstream_model)
