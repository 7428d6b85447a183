/**
 * What the gateway knows of one adapter (one wire format family), as data: a provider module.
 * Each adapter is one file of `adapters/modules/`, collected by `adapters/Registry.ts`; the
 * catalog's schema and rules, the built-in catalog, the config file's JSON Schema and the
 * console's add form are derived from the registry, and the server's wire formats are keyed by
 * its ids (`apps/server/src/providers/WireFormats.ts`).
 *
 * @since 0.13.0
 */
import { Schema } from "effect"
import type { InputModality } from "../schema/EmbeddingRequest.ts"
import type { QuantizedDtype } from "../vectors/OutputDtype.ts"

/**
 * What kind of provider an adapter reaches: a public API (`api`), a cloud's own service under its
 * identity (`cloud`: Azure, Bedrock, Vertex), a server a platform team runs itself (`self-hosted`:
 * replicas, health probes, discovery of what it serves), or the model inside the gateway
 * (`in-process`).
 *
 * @since 0.13.0
 */
type Kind = "api" | "cloud" | "self-hosted" | "in-process"

/**
 * The wire formats of the provider batch APIs the gateway speaks: `openai` is OpenAI's Files and
 * Batch API (upload a JSONL file to `/files`, create `/batches`, poll it, download its output);
 * `azure` is Azure OpenAI's (the same under `/openai`, with `api-version`, on global-batch
 * deployments); `mistral` Mistral's batch jobs (`/v1/batch/jobs`); `voyage` Voyage AI's Batch API
 * (`/v1/batches` with `request_params`); `gemini` the Gemini API's batch embeddings (Files API,
 * `asyncBatchEmbedContent`); `bedrock` Amazon Bedrock's batch inference (model invocation jobs
 * over S3); `vertex` Vertex AI's batch prediction jobs over Cloud Storage.
 *
 * @since 0.6.0
 */
export const BatchApi = Schema.Literals(["openai", "azure", "mistral", "voyage", "gemini", "bedrock", "vertex"])

/**
 * @since 0.6.0
 */
export type BatchApi = typeof BatchApi.Type

/**
 * What a provider does with a long input: `refuses` when it refuses by itself or can be told to
 * (else it cuts silently at its limit), and the ends it cuts when told to.
 *
 * @since 0.12.0
 */
export interface Support {
  readonly refuses: boolean
  readonly cuts: ReadonlyArray<"start" | "end">
}

/**
 * The fields of a batch placement a cloud's batch API needs (with what each is, for the error),
 * and those that belong to another cloud's.
 *
 * @since 0.13.0
 */
interface BatchPlacementRule {
  readonly needs: ReadonlyArray<readonly [field: "s3_uri" | "role_arn" | "gcs_uri", what: string]>
  readonly refuses: ReadonlyArray<"s3_uri" | "role_arn" | "gcs_uri" | "base_url">
}

/**
 * A provider's fields an adapter's rules read (the catalog's `Provider`, as far as they go).
 *
 * @since 0.13.0
 */
interface ProviderFacts {
  readonly dialect?: string | undefined
  readonly api_key_env?: string | null | undefined
  readonly auth?: string | undefined
  readonly credentials_file?: string | undefined
}

/**
 * The environment as a plain record.
 *
 * @since 0.13.0
 */
export type Environment = { readonly [name: string]: string | undefined }

/**
 * What the console's add form needs of an adapter: the label of its starting point and the
 * provider it starts from (absent: the adapter is reached through another's starting point, as
 * Infinity, Ollama and vLLM through the self-hosted one), and what the credential field says.
 *
 * @since 0.13.0
 */
interface Form {
  readonly start?: { readonly label: string; readonly provider: Readonly<Record<string, unknown>> } | undefined
  readonly credentialHint: string
}

/**
 * One adapter's module.
 *
 * @since 0.13.0
 */
export interface ProviderModule<Id extends string = string, Fields extends Schema.Struct.Fields = Schema.Struct.Fields> {
  /** The adapter's id, the config file's `adapter`. Written here and nowhere else. */
  readonly id: Id
  /** What people call it (`Amazon Bedrock`). */
  readonly name: string
  readonly kind: Kind
  /**
   * The config fields this adapter takes beyond every provider's (each optional in the schema;
   * another adapter's provider that sets one is refused). The self-hosted ones are shared.
   */
  readonly fields: Fields
  /** Of its fields and every provider's, those it cannot do without (`region`, `api_version`). */
  readonly needs: ReadonlyArray<string>
  /** Where it is reached when the config names no `base_url`, and whether the config must name one. */
  readonly baseUrl: { readonly default: string; readonly required: boolean }
  /** Its rerank API: none, text documents, or text and image documents (Jina's shape). */
  readonly rerank: "none" | "text" | "text-and-image"
  /** What an embeddings endpoint takes when its config lists no `input_modalities`. */
  readonly inputModalities: ReadonlyArray<InputModality>
  /** The batch API a provider of this adapter speaks, by its dialect (an `openai` provider's depends on it). */
  readonly batchApi: (provider: ProviderFacts) => BatchApi | undefined
  /** Where its batch API keeps its files, when the provider must say (Bedrock's S3, Vertex's Cloud Storage). */
  readonly batchPlacement?: BatchPlacementRule | undefined
  /** The quantized types its wire format can ask for (an endpoint's `output_dtypes` lists only these). */
  readonly nativeDtypes: (provider: ProviderFacts) => ReadonlyArray<QuantizedDtype>
  /** How its tokens are counted when the server counts them (`server`) or the model is in-process (`local`). */
  readonly counter?: "server" | "local" | undefined
  /** What it does with a long input. */
  readonly longInputs: (provider: ProviderFacts, upstreamModel: string) => Support
  /**
   * Whether a provider that carries no key of its own is active: a cloud identity in the
   * environment; `undefined` when the key rules apply (an `api_key_env` set, or none needed).
   */
  readonly identity?: ((provider: ProviderFacts, env: Environment) => boolean | undefined) | undefined
  /** The built-in catalog's providers of this adapter, written as the config file has them. */
  readonly catalog: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly form: Form
}

/**
 * A module, its id and fields kept as written (for the registry's types).
 *
 * @since 0.13.0
 */
export const define = <const Id extends string, const Fields extends Schema.Struct.Fields>(
  module: ProviderModule<Id, Fields>
): ProviderModule<Id, Fields> => module

/**
 * No batch API and no native types: what most adapters have.
 *
 * @since 0.13.0
 */
export const none = (): undefined => undefined

/**
 * @since 0.13.0
 */
export const noDtypes = (): ReadonlyArray<QuantizedDtype> => []

/**
 * The long-input behaviours (see `catalog/LongInputs.ts`): refuses and cuts either end; refuses
 * and cuts the end; refuses only; cuts the end silently.
 *
 * @since 0.13.0
 */
export const long: Readonly<Record<"both" | "end" | "none" | "silent", Support>> = {
  both: { refuses: true, cuts: ["start", "end"] },
  end: { refuses: true, cuts: ["end"] },
  none: { refuses: true, cuts: [] },
  silent: { refuses: false, cuts: ["end"] }
}

/**
 * The credential field's words shared by every adapter that stores a key.
 *
 * @since 0.13.0
 */
export const storedHint = "Stored encrypted and never shown again: only whether it is set and its last 4 characters."

/**
 * Whether any of the variables is set to something.
 *
 * @since 0.13.0
 */
export const anySet = (env: Environment, names: ReadonlyArray<string>): boolean =>
  names.some((name) => {
    const value = env[name]
    return value !== undefined && value.trim() !== ""
  })
