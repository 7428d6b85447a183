/**
 * The provider catalog: which providers exist, which models each serves at which price, and
 * the per-workspace provider settings. It is the config file's shape (`SWITCHYARD_CONFIG`,
 * JSON or YAML) and, merged with the built-in catalog, what routing reads.
 *
 * **Details**
 *
 * ```json
 * {
 *   "providers": [{
 *     "slug": "alpha", "name": "Alpha Cloud", "adapter": "openai",
 *     "base_url": "http://127.0.0.1:18080/v1", "api_key_env": "ALPHA_API_KEY",
 *     "data_collection": "deny", "zdr": true,
 *     "endpoints": [{
 *       "model": "openai/text-embedding-3-small", "upstream_model": "text-embedding-3-small",
 *       "pricing": { "prompt": "0.02", "request": "0", "image": "0", "audio": "0" },
 *       "quantization": "fp16", "dimensions": 1536,
 *       "supported_parameters": ["dimensions", "encoding_format", "input_type", "user"],
 *       "max_batch_items": 2048, "distillable": true
 *     }]
 *   }],
 *   "workspaces": { "default": { "only": null, "ignore": [], "data_collection": "allow", "zdr": false } }
 * }
 * ```
 *
 * - Prices are decimal USD strings: `prompt` and `completion` per million tokens, `request` per
 *   request, `image` per image, `audio` per audio unit, `search` per 1,000 search units (rerank).
 *   Each defaults to `"0"`. `pricing.batch` (same keys and units, each absent one at the live
 *   price) is what a line costs when a batch runs it through the provider's batch API; only an
 *   embeddings endpoint of a provider with one ({@link batchApiOf}) may set it.
 * - `task` (default `embeddings`) is what the endpoint does. An embeddings endpoint needs
 *   `dimensions` and `max_batch_items`; a rerank endpoint has neither and may cap the documents
 *   of one upstream call with `max_documents`.
 * - A provider is active when it needs no credential (`api_key_env` absent or `null`, as for
 *   the `local` adapter) or when the variable `api_key_env` names is set and non-empty.
 * - A `bedrock` provider names its AWS `region` (`us-east-1`); its `base_url` is optional
 *   (`https://bedrock-runtime.{region}.amazonaws.com` by default).
 * - Optional extras: `dialect` (an `openai` provider's API flavour, see {@link Dialect}; default
 *   `generic`, never guessed from the host), `enabled` (default `true`; `false` removes a built-in provider),
 *   `headers` (extra request headers), `timeout_ms`; per endpoint `variant` (default
 *   `"default"`, matched by `"provider/variant"` in `order`/`only`/`ignore`),
 *   `max_input_tokens` (the longest input in tokens), `matryoshka` (`true` or the allowed widths),
 *   `output_dtypes` (the quantized types the provider makes natively, {@link nativeDtypesOf}),
 *   `input_modalities` (default per adapter, see
 *   {@link defaultInputModalities}), `name`, `description`,
 *   `created` (unix seconds), `hugging_face_id`.
 * - Decoding refuses unknown properties and reports every broken rule with its path
 *   (`providers[0].endpoints[1].pricing.prompt: ...`).
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { HttpUrl, NonEmptyString } from "../adapters/Fields.ts"
import * as ProviderModule from "../adapters/ProviderModule.ts"
import * as Registry from "../adapters/Registry.ts"
import { awsCredentialEnv as awsVariables, bedrockBaseUrl as bedrockHost } from "../adapters/modules/bedrock.ts"
import { entraIdentity } from "../adapters/modules/azure.ts"
import { googleIdentity, vertexBaseUrl as vertexHost } from "../adapters/modules/vertex.ts"
import * as DecodeIssue from "../schema/DecodeIssue.ts"
import type { InputModality as InputModalityType } from "../schema/EmbeddingRequest.ts"
import { InputModality, ModelSlug } from "../schema/EmbeddingRequest.ts"
import { DataCollection, Quantization } from "../schema/ProviderPreferences.ts"
import type { RoutingSettings } from "../schema/Workspace.ts"
import { QuantizedDtype } from "../vectors/OutputDtype.ts"
import { Price } from "./Money.ts"
import * as SelfHosted from "./SelfHostedFields.ts"
import { Sso } from "./Sso.ts"

/**
 * How the gateway talks to a provider: one of the adapters of `adapters/Registry.ts`, each
 * described by its module in `adapters/modules/` (its kind, config fields, default base URL,
 * rerank API, batch API, built-in providers).
 *
 * @since 0.1.0
 */
const Adapter = Registry.Adapter

/**
 * @since 0.1.0
 */
type Adapter = Registry.AdapterId

/**
 * The flavour of an `openai` provider's API: `generic` is the plain OpenAI-compatible wire
 * format (as OpenRouter extends it: token ids, `{ content }` items, `input_type` passed through);
 * the others are the providers whose APIs differ from it in field names or accepted inputs.
 *
 * @since 0.1.0
 */
export const Dialect = Schema.Literals(["generic", "openai", "mistral", "jina", "together", "fireworks", "deepinfra"])

/**
 * @since 0.1.0
 */
export type Dialect = typeof Dialect.Type

const zero = Effect.succeed("0")

/**
 * What an endpoint does: `embeddings` (the default) turns inputs into vectors, `rerank` scores
 * documents against a query. A request reaches only endpoints of its own task.
 *
 * @since 0.4.0
 */
export const Task = Schema.Literals(["embeddings", "rerank"])

/**
 * @since 0.4.0
 */
export type Task = typeof Task.Type

/**
 * The kinds of document a rerank endpoint can take.
 *
 * @since 0.4.0
 */
const rerankModalities: ReadonlyArray<InputModalityType> = ["text", "image"]

/**
 * The price of an endpoint's lines when the gateway runs them through its provider's batch API
 * (see {@link batchApiOf}): the live price's components, each in the same unit, and each absent
 * one at the live price ({@link batchPricingOf}).
 *
 * @since 0.6.0
 */
const BatchPricing = Schema.Struct({
  prompt: Schema.optionalKey(Price),
  search: Schema.optionalKey(Price),
  completion: Schema.optionalKey(Price),
  request: Schema.optionalKey(Price),
  image: Schema.optionalKey(Price),
  audio: Schema.optionalKey(Price)
})

/**
 * An endpoint's list price (decimal USD strings). `search` is USD per 1,000 search units (a
 * rerank query over up to 100 documents, as Cohere prices rerank). `batch`, when set, is the
 * price of lines run through the provider's batch API (a provider batch), in the same units.
 *
 * @since 0.1.0
 */
export const Pricing = Schema.Struct({
  prompt: Price.pipe(Schema.withDecodingDefaultKey(zero)),
  search: Price.pipe(Schema.withDecodingDefaultKey(zero)),
  completion: Price.pipe(Schema.withDecodingDefaultKey(zero)),
  request: Price.pipe(Schema.withDecodingDefaultKey(zero)),
  image: Price.pipe(Schema.withDecodingDefaultKey(zero)),
  audio: Price.pipe(Schema.withDecodingDefaultKey(zero)),
  batch: Schema.optionalKey(BatchPricing)
})

/**
 * @since 0.1.0
 */
export type Pricing = typeof Pricing.Type

/**
 * The kinds of price a pricing has (every key but `batch`).
 *
 * @since 0.6.0
 */
export type PriceKind = Exclude<keyof Pricing, "batch">

const priceKinds: ReadonlyArray<PriceKind> = ["prompt", "search", "completion", "request", "image", "audio"]

const batchPrices = new WeakMap<Pricing, Pricing>()

/**
 * The price of an endpoint's lines served by a provider batch: `pricing.batch`'s components, each
 * absent one at the live price; `undefined` when the endpoint has no batch price. The same object
 * for the same pricing, so the cost's parsed prices are kept with it.
 *
 * @since 0.6.0
 */
export const batchPricingOf = (pricing: Pricing): Pricing | undefined => {
  const batch = pricing.batch
  if (batch === undefined) return undefined
  let priced = batchPrices.get(pricing)
  if (priced === undefined) {
    const out: Record<PriceKind, string> = { prompt: "0", search: "0", completion: "0", request: "0", image: "0", audio: "0" }
    for (const kind of priceKinds) out[kind] = batch[kind] ?? pricing[kind]
    priced = out
    batchPrices.set(pricing, priced)
  }
  return priced
}

/**
 * The wire formats of the provider batch APIs the gateway speaks (see `adapters/ProviderModule.ts`).
 *
 * @since 0.6.0
 */
export const BatchApi = ProviderModule.BatchApi

/**
 * @since 0.6.0
 */
export type BatchApi = ProviderModule.BatchApi

/**
 * The batch API a provider has, as data: an `openai` provider in OpenAI's own dialect speaks
 * OpenAI's Batch API, in Mistral's dialect Mistral's batch jobs; an `azure`, `voyage`, `gemini`,
 * `bedrock` or `vertex` provider its cloud's own. No other provider has one the gateway speaks.
 *
 * @since 0.6.0
 */
export const batchApiOf = (provider: Pick<Provider, "adapter" | "dialect">): BatchApi | undefined =>
  Registry.moduleOf(provider.adapter).batchApi(provider)

// Which providers have a batch API, in words: the adapters with one whatever their dialect, and
// those with one in some dialects (`openai` in OpenAI's and Mistral's).
const batchApiWords = ((): string => {
  const always = Registry.adapterIds.filter((id) => Registry.moduleOf(id).batchApi({}) !== undefined)
  const byDialect = Registry.adapterIds.flatMap((id) => {
    const dialects = Dialect.literals.filter((dialect) => Registry.moduleOf(id).batchApi({ dialect }) !== undefined)
    return always.includes(id) || dialects.length === 0 ? [] : [`adapter ${id} with dialect ${dialects.join(" or ")}`]
  })
  const all = [...byDialect, ...always]
  return `${all.slice(0, -1).join(", ")} or ${all[all.length - 1]} has one`
})()

/**
 * The quantized types a provider's wire format can ask for (an endpoint's `output_dtypes` may
 * list only these): Cohere's `embedding_types` (and Cohere Embed on Bedrock), Voyage's and
 * Mistral's `output_dtype`, Jina's `embedding_type` (binary ones only).
 *
 * @since 0.12.0
 */
const nativeDtypesOf = (provider: Pick<Provider, "adapter" | "dialect">): ReadonlyArray<QuantizedDtype> =>
  Registry.moduleOf(provider.adapter).nativeDtypes(provider)

const Slug = Schema.String.check(
  Schema.isPattern(/^[a-z0-9][a-z0-9._-]*$/u, { expected: "a lowercase slug (letters, digits, '.', '_', '-')" })
)
const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

/**
 * One model served by one provider.
 *
 * @since 0.1.0
 */
export const Endpoint = Schema.Struct({
  model: ModelSlug,
  upstream_model: NonEmptyString,
  /** The upstream model a provider batch's lines name, when not `upstream_model` (Azure's global-batch deployment). */
  batch_upstream_model: Schema.optionalKey(NonEmptyString),
  task: Task.pipe(Schema.withDecodingDefaultKey(Effect.succeed("embeddings" as const))),
  variant: Slug.pipe(Schema.withDecodingDefaultKey(Effect.succeed("default"))),
  pricing: Pricing,
  quantization: Quantization.pipe(Schema.withDecodingDefaultKey(Effect.succeed("unknown" as const))),
  /** The vectors' width; required of an embeddings endpoint, absent on a rerank one. */
  dimensions: Schema.optionalKey(PositiveInt),
  supported_parameters: Schema.Array(Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
  /** Items per upstream call of an embeddings endpoint (required there). */
  max_batch_items: Schema.optionalKey(PositiveInt),
  /** Documents per upstream call of a rerank endpoint; absent: no limit. */
  max_documents: Schema.optionalKey(PositiveInt),
  distillable: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false))),
  max_input_tokens: Schema.optionalKey(PositiveInt),
  /**
   * The model is Matryoshka: `true` (any width up to `dimensions`) or the widths it allows; the
   * gateway cuts and re-normalises a vector where the provider does not take `dimensions`.
   */
  matryoshka: Schema.optionalKey(Schema.Union([Schema.Literal(true), Schema.Array(PositiveInt).check(Schema.isMinLength(1))])),
  /** The quantized types the provider makes natively (`float` always); the gateway makes the others. */
  output_dtypes: Schema.optionalKey(Schema.Array(QuantizedDtype)),
  /** Absent: the default of the provider's adapter, or text for a rerank endpoint ({@link inputModalitiesOf}). */
  input_modalities: Schema.optionalKey(Schema.Array(InputModality).check(Schema.isMinLength(1))),
  name: Schema.optionalKey(NonEmptyString),
  description: Schema.optionalKey(Schema.String),
  created: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  hugging_face_id: Schema.optionalKey(Schema.String)
}).check(Schema.makeFilter((e) => {
  const issues: Array<Schema.FilterIssue> = []
  if (e.task === "embeddings") {
    if (e.dimensions === undefined) issues.push({ path: ["dimensions"], issue: "an embeddings endpoint needs dimensions" })
    if (e.max_batch_items === undefined) issues.push({ path: ["max_batch_items"], issue: "an embeddings endpoint needs max_batch_items" })
    if (e.max_documents !== undefined) issues.push({ path: ["max_documents"], issue: "max_documents belongs to a rerank endpoint" })
    const wider = Array.isArray(e.matryoshka) ? e.matryoshka.filter((w) => w > (e.dimensions ?? 0)) : []
    if (wider.length > 0 && !e.supported_parameters.includes("dimensions")) {
      issues.push({ path: ["matryoshka"], issue: `widths ${wider.join(", ")} exceed dimensions ${e.dimensions}, and the endpoint does not take dimensions` })
    }
  } else {
    if (e.matryoshka !== undefined) issues.push({ path: ["matryoshka"], issue: "matryoshka belongs to an embeddings endpoint" })
    if (e.output_dtypes !== undefined) issues.push({ path: ["output_dtypes"], issue: "output_dtypes belongs to an embeddings endpoint" })
    if (e.dimensions !== undefined) issues.push({ path: ["dimensions"], issue: "a rerank endpoint has no dimensions" })
    if (e.max_batch_items !== undefined) issues.push({ path: ["max_batch_items"], issue: "a rerank endpoint takes max_documents, not max_batch_items" })
    const other = e.input_modalities?.filter((m) => !rerankModalities.includes(m)) ?? []
    if (other.length > 0) {
      issues.push({ path: ["input_modalities"], issue: `a rerank endpoint takes text and image documents, not ${other.join(", ")}` })
    }
  }
  return issues
}))

/**
 * @since 0.1.0
 */
export type Endpoint = typeof Endpoint.Type

/**
 * The width of an embeddings endpoint's vectors (0 for a rerank endpoint, which has none).
 *
 * @since 0.4.0
 */
export const widthOf = (endpoint: Pick<Endpoint, "dimensions">): number => endpoint.dimensions ?? 0

/**
 * Items per upstream call: `max_batch_items` of an embeddings endpoint, `max_documents` of a
 * rerank one; unbounded when a rerank endpoint sets none.
 *
 * @since 0.4.0
 */
export const batchSizeOf = (endpoint: Endpoint): number =>
  (endpoint.task === "rerank" ? endpoint.max_documents : endpoint.max_batch_items) ?? Number.MAX_SAFE_INTEGER

const EnvName = Schema.String.check(
  Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]*$/u, { expected: "an environment variable name" })
)

const uniqueEndpoints = Schema.makeFilter((endpoints: ReadonlyArray<Endpoint>) => {
  const seen = new Set<string>()
  const issues: Array<Schema.FilterIssue> = []
  endpoints.forEach((e, i) => {
    const key = `${e.model.toLowerCase()}|${e.variant}`
    if (seen.has(key)) issues.push({ path: [i], issue: `duplicate endpoint: model ${e.model} variant ${e.variant} is listed twice` })
    seen.add(key)
  })
  return issues
})

/** The config fields of the cloud adapters' modules (the self-hosted servers' are checked by {@link SelfHosted.issues}). */
const cloudFields: ReadonlyArray<string> = Object.keys(Registry.fields).filter((field) =>
  Registry.declaring(field).every((id) => Registry.moduleOf(id).kind !== "self-hosted")
)

// How a field an adapter needs is named in its refusal.
const neededAs: Readonly<Record<string, string>> = { base_url: "a base_url", region: "a region" }

/**
 * What is wrong with a provider's adapter-specific fields: a field its module needs and it lacks
 * (a `base_url` where the module has no default host of its own, Bedrock's `region`, Azure's
 * `api_version`, Vertex's `project` and `location`), a cloud field of another adapter's module.
 */
const adapterIssues = (p: { readonly adapter: Adapter } & Readonly<Record<string, unknown>>): Array<Schema.FilterIssue> => {
  const module = Registry.moduleOf(p.adapter)
  const issues: Array<Schema.FilterIssue> = []
  const needs = module.baseUrl.required && p.base_urls === undefined ? ["base_url", ...module.needs] : module.needs
  for (const field of needs) {
    if (p[field] === undefined) issues.push({ path: [field], issue: `a provider with adapter ${p.adapter} needs ${neededAs[field] ?? field}` })
  }
  for (const field of cloudFields) {
    if (p[field] !== undefined && !Object.hasOwn(module.fields, field)) {
      issues.push({ path: [field], issue: `${field} belongs to another adapter than ${p.adapter}` })
    }
  }
  return issues
}


/**
 * Where a cloud provider's batch API keeps its files, which the gateway cannot guess: Bedrock's
 * S3 prefix and the service role its jobs read and write it as (`s3_uri`, `role_arn`; optionally
 * `base_url`, Bedrock's control plane, default `https://bedrock.{region}.amazonaws.com`);
 * Vertex's Cloud Storage prefix (`gcs_uri`). `storage_url` names the storage API's endpoint when
 * it is not the cloud's own (an S3-compatible store or a private endpoint, addressed path-style).
 *
 * @since 0.10.0
 */
const BatchPlacement = Schema.Struct({
  s3_uri: Schema.optionalKey(Schema.String.check(
    Schema.isPattern(/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/\S*)?$/u, { expected: "an S3 URI such as s3://bucket/prefix/" })
  )),
  role_arn: Schema.optionalKey(Schema.String.check(
    Schema.isPattern(/^arn:aws[a-z-]*:iam::\d{12}:role\/\S+$/u, { expected: "an IAM role ARN such as arn:aws:iam::123456789012:role/BedrockBatchRole" })
  )),
  gcs_uri: Schema.optionalKey(Schema.String.check(
    Schema.isPattern(/^gs:\/\/[a-z0-9][a-z0-9._-]{1,220}[a-z0-9](\/\S*)?$/u, { expected: "a Cloud Storage URI such as gs://bucket/prefix/" })
  )),
  base_url: Schema.optionalKey(HttpUrl),
  storage_url: Schema.optionalKey(HttpUrl)
})

/**
 * @since 0.10.0
 */
export type BatchPlacement = typeof BatchPlacement.Type

const batchIssues = (p: {
  readonly adapter: Adapter
  readonly batch?: BatchPlacement | undefined
  readonly endpoints: ReadonlyArray<{ readonly pricing: { readonly batch?: unknown } }>
}): Array<Schema.FilterIssue> => {
  const issues: Array<Schema.FilterIssue> = []
  const placement = p.batch
  // A batch price there, or a placement begun: the placement must be whole.
  const wanted = placement !== undefined || p.endpoints.some((e) => e.pricing.batch !== undefined)
  const need = (field: keyof BatchPlacement, what: string) => {
    if (wanted && placement?.[field] === undefined) {
      issues.push({ path: ["batch", field], issue: `a ${p.adapter} provider with a batch API needs batch.${field}, ${what}` })
    }
  }
  const refuse = (fields: ReadonlyArray<keyof BatchPlacement>) => {
    for (const field of fields) {
      if (placement?.[field] !== undefined) issues.push({ path: ["batch", field], issue: `batch.${field} belongs to another adapter than ${p.adapter}` })
    }
  }
  const rule = Registry.moduleOf(p.adapter).batchPlacement
  if (rule !== undefined) {
    for (const [field, what] of rule.needs) need(field, what)
    refuse(rule.refuses)
  } else if (placement !== undefined) {
    issues.push({
      path: ["batch"],
      issue: `batch belongs to a ${Registry.adapterIds.filter((id) => Registry.moduleOf(id).batchPlacement !== undefined).join(" or ")} provider; adapter ${p.adapter} keeps its batch files at the provider`
    })
  }
  return issues
}

/**
 * Where a Vertex provider is reached when its config names no `base_url`: its location's host.
 *
 * @since 0.9.0
 */
export const vertexBaseUrl: (location: string) => string = vertexHost

/**
 * Where a Bedrock provider is reached when its config names no `base_url`: its region's runtime host.
 *
 * @since 0.13.0
 */
export const bedrockBaseUrl: (region: string) => string = bedrockHost

/**
 * One provider and the endpoints it serves.
 *
 * @since 0.1.0
 */
export const Provider = Schema.Struct({
  slug: Slug,
  name: NonEmptyString,
  adapter: Adapter,
  dialect: Schema.optionalKey(Dialect),
  base_url: Schema.optionalKey(Schema.String.check(
    Schema.isPattern(/^https?:\/\/\S+$/u, { expected: "an http(s) URL" })
  )),
  api_key_env: Schema.optionalKey(Schema.NullOr(EnvName)),
  region: Schema.optionalKey(Schema.String.check(
    Schema.isPattern(/^[a-z]{2}(-[a-z]+)+-\d+$/u, { expected: "an AWS region such as us-east-1" })
  )),
  data_collection: DataCollection,
  zdr: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false))),
  enabled: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(true))),
  headers: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  timeout_ms: Schema.optionalKey(PositiveInt),
  /** Each adapter's own fields, from its module (Azure's, Vertex's, the self-hosted servers'). */
  ...Registry.fields,
  /** Where a Bedrock or Vertex provider's batch API keeps its files (see {@link BatchPlacement}). */
  batch: Schema.optionalKey(BatchPlacement),
  /** The price of the endpoints a self-hosted provider discovers (`discover`); absent, free. */
  default_pricing: Schema.optionalKey(Pricing),
  /** Absent: none listed by hand (a discovering provider serves what its server lists). */
  endpoints: Schema.Array(Endpoint).check(uniqueEndpoints).pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))
}).check(Schema.makeFilter((p) => {
  const issues: Array<Schema.FilterIssue> = []
  issues.push(...adapterIssues(p))
  issues.push(...batchIssues(p))
  issues.push(...SelfHosted.issues(p))
  p.endpoints.forEach((e, i) => {
    const rerank = Registry.moduleOf(p.adapter).rerank
    if (e.task === "rerank" && rerank === "none") {
      issues.push({ path: ["endpoints", i, "task"], issue: `adapter ${p.adapter} has no rerank API` })
    }
    if (e.task === "rerank" && e.input_modalities?.includes("image") === true && rerank !== "text-and-image") {
      issues.push({ path: ["endpoints", i, "input_modalities"], issue: `the rerank API of adapter ${p.adapter} takes text documents only` })
    }
    const foreign = (e.output_dtypes ?? []).filter((t) => !nativeDtypesOf(p).includes(t))
    if (foreign.length > 0) {
      issues.push({ path: ["endpoints", i, "output_dtypes"], issue: `adapter ${p.adapter} cannot ask its provider for ${foreign.join(", ")}` })
    }
    if (e.pricing.batch !== undefined && (e.task !== "embeddings" || batchApiOf(p) === undefined)) {
      issues.push({
        path: ["endpoints", i, "pricing", "batch"],
        issue: e.task !== "embeddings"
          ? "a batch price belongs to an embeddings endpoint"
          : `provider ${p.slug} has no batch API the gateway speaks (${batchApiWords})`
      })
    }
  })
  return issues
}))

/**
 * @since 0.1.0
 */
export type Provider = typeof Provider.Type

/**
 * A workspace's provider settings, applied to every request of its keys: `only` (allowed
 * provider slugs, `null` = all), `ignore`, `data_collection` and `zdr`. A request can narrow
 * them, never widen them. `cache` turns the embeddings cache on for the workspace.
 *
 * @since 0.1.0
 */
export const Workspace = Schema.Struct({
  only: Schema.NullOr(Schema.Array(Schema.String)).pipe(Schema.withDecodingDefaultKey(Effect.succeed(null))),
  ignore: Schema.Array(Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
  data_collection: DataCollection.pipe(Schema.withDecodingDefaultKey(Effect.succeed("allow" as const))),
  zdr: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false))),
  cache: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false)))
})

/**
 * @since 0.1.0
 */
export type Workspace = typeof Workspace.Type

/**
 * The settings of a workspace the catalog does not mention: no restriction.
 *
 * @since 0.1.0
 */
export const openWorkspace: Workspace = { only: null, ignore: [], data_collection: "allow", zdr: false, cache: false }

const uniqueProviders = Schema.makeFilter((providers: ReadonlyArray<Provider>) => {
  const seen = new Set<string>()
  const issues: Array<Schema.FilterIssue> = []
  providers.forEach((p, i) => {
    if (seen.has(p.slug)) issues.push({ path: [i, "slug"], issue: `duplicate provider slug ${p.slug}` })
    seen.add(p.slug)
  })
  return issues
})

/**
 * A broadcast destination: an HTTP endpoint that receives one JSON event per served request,
 * with the request's `trace` (every key, known or custom), asynchronously and with retries.
 *
 * @since 0.1.0
 */
export const BroadcastDestination = Schema.Struct({
  url: Schema.String.check(Schema.isPattern(/^https?:\/\/\S+$/u)),
  headers: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  timeout_ms: Schema.optionalKey(PositiveInt)
})

/**
 * @since 0.1.0
 */
export type BroadcastDestination = typeof BroadcastDestination.Type

/**
 * The whole catalog (the config file, the built-in catalog, or both merged).
 *
 * @since 0.1.0
 */
export const Catalog = Schema.Struct({
  $schema: Schema.optionalKey(Schema.String),
  providers: Schema.Array(Provider).check(uniqueProviders).pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
  workspaces: Schema.Record(Schema.String, Workspace).pipe(Schema.withDecodingDefaultKey(Effect.succeed({}))),
  broadcast: Schema.Array(BroadcastDestination).pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
  sso: Schema.optionalKey(Sso)
})

/**
 * @since 0.1.0
 */
export type Catalog = typeof Catalog.Type

/**
 * The config file does not fit the catalog schema. `issues` names each broken rule by path.
 *
 * @since 0.1.0
 */
export class CatalogError extends Schema.TaggedError<CatalogError>()("CatalogError", {
  message: Schema.String,
  issues: Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String }))
}) {}

/**
 * Decodes a parsed config file (the value of its JSON or YAML) into a {@link Catalog},
 * refusing unknown properties and reporting every broken rule with its path.
 *
 * @since 0.1.0
 */
export const decode = (file: unknown): Effect.Effect<Catalog, CatalogError> =>
  Schema.decodeUnknownEffect(Catalog)(file, { errors: "all", onExcessProperty: "error" }).pipe(
    Effect.mapError((error) => {
      const issues = DecodeIssue.fromSchemaError(error)
      return new CatalogError({ message: `Invalid catalog: ${DecodeIssue.summarize(issues)}`, issues })
    })
  )

/**
 * Overlays a config file on the built-in catalog: a file provider replaces the built-in
 * provider of the same slug wholesale (in place); new slugs are appended; workspaces are
 * replaced by name.
 *
 * @since 0.1.0
 */
export const merge = (builtin: Catalog, file: Catalog): Catalog => {
  const overrides = new Map(file.providers.map((p) => [p.slug, p]))
  const providers = builtin.providers.map((p) => overrides.get(p.slug) ?? p)
  const builtinSlugs = new Set(builtin.providers.map((p) => p.slug))
  for (const p of file.providers) if (!builtinSlugs.has(p.slug)) providers.push(p)
  return {
    providers,
    workspaces: { ...builtin.workspaces, ...file.workspaces },
    broadcast: [...builtin.broadcast, ...file.broadcast],
    ...(file.sso === undefined ? {} : { sso: file.sso })
  }
}

/**
 * The environment as a plain record, for {@link isActive}.
 *
 * @since 0.1.0
 */
export type Environment = { readonly [name: string]: string | undefined }

/**
 * The variables that say a cloud identity is at hand ({@link isActive} reads them): Google's
 * Application Default Credentials and the Entra ID identities DefaultAzureCredential finds.
 *
 * @since 0.9.0
 */
export const identityVariables: ReadonlyArray<string> = [...googleIdentity, ...entraIdentity]

/**
 * The variables that say AWS credentials are configured for the default credential chain: keys,
 * a shared profile, a web identity token (EKS), a container role (ECS), or an instance role
 * opted into with `AWS_EC2_METADATA_DISABLED=false`. A `bedrock` provider without
 * `api_key_env` is active when one of them is set.
 *
 * @since 0.9.0
 */
export const awsCredentialEnv: ReadonlyArray<string> = awsVariables

/**
 * Whether a provider can take requests: enabled, and either needing no credential or having
 * its `api_key_env` variable set to a non-empty value; a cloud provider's identity counts as its
 * credential (a `bedrock` provider without a key: the AWS chain configured, see {@link awsCredentialEnv};
 * Vertex's credentials file or Application Default Credentials; Azure's Entra ID).
 *
 * @since 0.1.0
 */
export const isActive = (provider: Provider, env: Environment): boolean => {
  if (!provider.enabled) return false
  const identity = Registry.moduleOf(provider.adapter).identity?.(provider, env)
  if (identity !== undefined) return identity
  if (provider.api_key_env === undefined || provider.api_key_env === null) return true
  const value = env[provider.api_key_env]
  return value !== undefined && value.trim() !== ""
}

/**
 * The settings of a workspace by name, {@link openWorkspace} when the catalog has none.
 *
 * @since 0.1.0
 */
export const workspace = (catalog: Catalog, name: string): Workspace => catalog.workspaces[name] ?? openWorkspace

/**
 * A workspace's provider settings as requests apply them: the config file's, with what a
 * management key set over them.
 *
 * @since 0.3.0
 */
export const withRouting = (base: Workspace, routing: RoutingSettings | null): Workspace =>
  routing === null ? base : { ...base, ...routing }

/**
 * The kinds of input an endpoint takes when its config does not list `input_modalities`: what
 * every API of that wire format accepts, as its module says (an OpenAI-compatible API takes text
 * and token ids, as OpenAI's own does; Cohere, Voyage and Gemini endpoints take text, listing
 * `image` where the model embeds images; the in-process model takes everything).
 */
const defaultInputModalities = (adapter: Adapter): ReadonlyArray<InputModalityType> => Registry.moduleOf(adapter).inputModalities

const textOnly: ReadonlyArray<InputModalityType> = ["text"]

/**
 * The kinds of input one endpoint takes: its `input_modalities`, else its adapter's default for
 * embeddings; a rerank endpoint takes text unless it lists `image` (few rerank models see images).
 *
 * @since 0.1.0
 */
export const inputModalitiesOf = (provider: Provider, endpoint: Endpoint): ReadonlyArray<InputModalityType> =>
  endpoint.input_modalities ?? (endpoint.task === "rerank" ? textOnly : defaultInputModalities(provider.adapter))
