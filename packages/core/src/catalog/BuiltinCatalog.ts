/**
 * The catalog every install starts with: the public embedding and rerank providers at their list
 * prices, plus the in-process `local` provider, which needs no key, so that a fresh install
 * answers `switchyard/local-embed` and `switchyard/local-rerank` with no credentials at all.
 *
 * **Details**
 *
 * A provider here is active only when its `api_key_env` variable is set (Amazon Bedrock: when
 * the AWS credential chain is configured); a config file
 * overrides any entry by slug (or removes it with `"enabled": false`).
 *
 * **Gotchas**
 *
 * Prices, limits and data policies are public facts that change. They were taken from the
 * providers' published pages; entries marked `approx` in comments were not confirmed against
 * a primary source and should be checked before relying on them for billing. Data policies are
 * recorded conservatively: when a provider may store or train on API data under some plan or
 * default, it is listed as `data_collection: "allow"`, so `data_collection: "deny"` never
 * routes to it. `quantization` is `unknown` wherever the provider does not publish it.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import * as Registry from "../adapters/Registry.ts"
import { unplacedAzure } from "../adapters/modules/azure.ts"
import { unplacedProject } from "../adapters/modules/vertex.ts"
import * as Catalog from "./Catalog.ts"

export {
  /**
   * The in-process model every install can serve without credentials.
   *
   * @since 0.1.0
   */
  localDimensions,
  /**
   * The width of the in-process model's vectors unless `dimensions` asks otherwise.
   *
   * @since 0.1.0
   */
  localModel
} from "../adapters/modules/local.ts"

// The built-in providers in the order they were listed before the adapters' modules held them
// (an order listings and ties keep); a module's provider not named here comes after them.
const order = [
  "local",
  "openai",
  "cohere",
  "amazon-bedrock",
  "azure",
  "google-vertex",
  "voyage",
  "mistral",
  "google-ai-studio",
  "jina",
  "together",
  "fireworks",
  "deepinfra"
]

const rank = (provider: Readonly<Record<string, unknown>>): number => {
  const at = order.indexOf(provider.slug as string)
  return at === -1 ? order.length : at
}

// Every module's built-in providers, written in the config file's own format and decoded through
// the same schema, so a typo there fails the test suite exactly as it would fail an operator's file.
const source = {
  providers: Registry.modules.flatMap((module) => module.catalog).sort((a, b) => rank(a) - rank(b)),
  workspaces: {
    default: { only: null, ignore: [], data_collection: "allow", zdr: false, cache: false }
  }
}

/**
 * The built-in catalog, decoded and validated.
 *
 * @since 0.1.0
 */
export const builtin: Catalog.Catalog = Schema.decodeUnknownSync(Catalog.Catalog)(source, { onExcessProperty: "error" })

/**
 * The variables that place the built-in cloud providers ({@link placed}): the Azure OpenAI
 * resource (`AZURE_OPENAI_ENDPOINT`, and `OPENAI_API_VERSION`, as the OpenAI SDK's Azure client
 * reads them) and the Google Cloud project and region (`GOOGLE_CLOUD_PROJECT`,
 * `GOOGLE_CLOUD_LOCATION`).
 *
 * @since 0.9.0
 */
export const placementVariables: ReadonlyArray<string> = [
  "AZURE_OPENAI_ENDPOINT",
  "OPENAI_API_VERSION",
  "GOOGLE_CLOUD_PROJECT",
  "GOOGLE_CLOUD_LOCATION",
  "SWITCHYARD_BEDROCK_BATCH_S3_URI",
  "SWITCHYARD_BEDROCK_BATCH_ROLE_ARN",
  "SWITCHYARD_VERTEX_BATCH_GCS_URI"
]

const setting = (env: Catalog.Environment, name: string): string | undefined => {
  const value = env[name]?.trim()
  return value === undefined || value === "" ? undefined : value
}

/**
 * The built-in catalog with its cloud providers placed by the environment: `azure` enabled at
 * the resource `AZURE_OPENAI_ENDPOINT` names (an `https` URL; anything else leaves it disabled),
 * `google-vertex` enabled in the project `GOOGLE_CLOUD_PROJECT` names. Enabled is not active:
 * each still needs its credential ({@link Catalog.isActive}).
 *
 * @since 0.9.0
 */
export const placed = (catalog: Catalog.Catalog, env: Catalog.Environment): Catalog.Catalog => ({
  ...catalog,
  providers: catalog.providers.map((p) => batchPlaced(cloudPlaced(p, env), env))
})

/**
 * A built-in Bedrock or Vertex provider's batch API, placed by the environment: its files go to
 * the operator's own bucket (and Bedrock's jobs run as the operator's role), so its batch prices
 * hold only once `SWITCHYARD_BEDROCK_BATCH_S3_URI` and `SWITCHYARD_BEDROCK_BATCH_ROLE_ARN` (or
 * `SWITCHYARD_VERTEX_BATCH_GCS_URI`) name them; until then its lines run live.
 */
const batchPlaced = (p: Catalog.Provider, env: Catalog.Environment): Catalog.Provider => {
  const placement = p.slug === "amazon-bedrock" ? bedrockBatch(env) : p.slug === "google-vertex" ? vertexBatch(env) : undefined
  if (placement === undefined || p.batch !== undefined) return p
  return {
    ...p,
    batch: placement,
    endpoints: p.endpoints.map((e) => {
      const batch = cloudBatchPrices[e.upstream_model]
      return batch === undefined ? e : { ...e, pricing: { ...e.pricing, batch: { prompt: batch } } }
    })
  }
}

/**
 * The built-in Bedrock and Vertex endpoints' published batch prices (USD per million tokens, by
 * upstream model), which hold once the environment places their batch API: Bedrock's batch
 * inference at half the on-demand price; Vertex's batch prediction of text embeddings at
 * $0.00002 per 1,000 characters against $0.000025 online (80 %; gemini-embedding-001 has no
 * batch prediction in this form).
 */
const cloudBatchPrices: Readonly<Record<string, string>> = {
  "amazon.titan-embed-text-v2:0": "0.01",
  "cohere.embed-english-v3": "0.05",
  "cohere.embed-multilingual-v3": "0.05",
  "text-embedding-005": "0.08",
  "text-multilingual-embedding-002": "0.08"
}

const bedrockBatch = (env: Catalog.Environment): Catalog.BatchPlacement | undefined => {
  const s3Uri = setting(env, "SWITCHYARD_BEDROCK_BATCH_S3_URI")
  const roleArn = setting(env, "SWITCHYARD_BEDROCK_BATCH_ROLE_ARN")
  return s3Uri === undefined || roleArn === undefined ? undefined : { s3_uri: s3Uri, role_arn: roleArn }
}

const vertexBatch = (env: Catalog.Environment): Catalog.BatchPlacement | undefined => {
  const gcsUri = setting(env, "SWITCHYARD_VERTEX_BATCH_GCS_URI")
  return gcsUri === undefined ? undefined : { gcs_uri: gcsUri }
}

const cloudPlaced = (p: Catalog.Provider, env: Catalog.Environment): Catalog.Provider => {
    if (p.slug === "azure" && p.base_url === unplacedAzure) {
      const endpoint = setting(env, "AZURE_OPENAI_ENDPOINT")
      if (endpoint === undefined || !/^https:\/\/\S+$/u.test(endpoint)) return p
      const version = setting(env, "OPENAI_API_VERSION")
      return { ...p, enabled: true, base_url: endpoint.replace(/\/+$/u, ""), ...(version !== undefined ? { api_version: version } : {}) }
    }
    if (p.slug === "google-vertex" && p.project === unplacedProject) {
      const project = setting(env, "GOOGLE_CLOUD_PROJECT")
      if (project === undefined) return p
      return { ...p, enabled: true, project, location: setting(env, "GOOGLE_CLOUD_LOCATION") ?? p.location ?? "us-central1" }
    }
    return p
}
