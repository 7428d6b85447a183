/**
 * Azure OpenAI: a resource's own host, deployment URLs, `api-version`, an `api-key` or an Entra ID
 * token, and its Global Batch. Wire format: `apps/server/src/providers/Azure.ts` over
 * `OpenAiCompatible.ts`, batches `OpenAiBatch.ts`.
 *
 * @since 0.13.0
 */
import { Schema } from "effect"
import { NonEmptyString } from "../Fields.ts"
import { anySet, define, long, noDtypes, storedHint } from "../ProviderModule.ts"
import { openAiEndpoints } from "./openai.ts"

const id = "azure"

/**
 * The variables that say an Entra ID identity is at hand (what DefaultAzureCredential finds).
 *
 * @since 0.13.0
 */
export const entraIdentity: ReadonlyArray<string> = ["AZURE_CLIENT_ID", "IDENTITY_ENDPOINT", "MSI_ENDPOINT"]

/**
 * Where the built-in Azure provider points until the environment places it: a host that is
 * nobody's (the reserved `.invalid` name), on a provider listed disabled.
 *
 * @since 0.13.0
 */
export const unplacedAzure = "https://unplaced.invalid"

/**
 * @since 0.13.0
 */
export const azure = define({
  id,
  name: "Azure OpenAI",
  kind: "cloud",
  /** `api_version`; `auth`: `"entra"`, a token from Entra ID instead of `api_key_env`. */
  fields: {
    api_version: Schema.optionalKey(NonEmptyString),
    auth: Schema.optionalKey(Schema.Literal("entra"))
  },
  needs: ["api_version"],
  // An Azure OpenAI resource has its own host: its config names it.
  baseUrl: { default: "https://invalid.openai.azure.com", required: true },
  rerank: "none",
  inputModalities: ["text", "tokens"],
  batchApi: () => "azure",
  nativeDtypes: noDtypes,
  longInputs: () => long.none,
  // DefaultAzureCredential: a service principal or workload identity in the environment, or a managed identity.
  identity: (provider, env) => provider.auth === "entra" ? anySet(env, entraIdentity) : undefined,
  catalog: [
    {
      // Azure OpenAI: a resource's own host and deployments, so listed disabled until
      // `AZURE_OPENAI_ENDPOINT` names the resource (see {@link placed}); then active when
      // `AZURE_OPENAI_API_KEY` is set (a config file entry with `"auth": "entra"` for Entra ID).
      // Each deployment is assumed named after its model (`upstream_model`); a config file
      // entry of slug `azure` replaces this one where they differ. Microsoft does not train on
      // Azure OpenAI data. Prices: Azure OpenAI's pricing page, global deployments, read
      // 2026-11-29 (approx: the same per-token prices as OpenAI's; Global Batch at half).
      slug: "azure",
      name: "Azure OpenAI",
      adapter: id,
      base_url: unplacedAzure,
      api_version: "2024-10-21",
      api_key_env: "AZURE_OPENAI_API_KEY",
      enabled: false,
      data_collection: "deny",
      zdr: false,
      // OpenAI's models at their list price; Azure's batch runs on a deployment of its own.
      endpoints: openAiEndpoints.map(({ pricing: { batch: _, ...pricing }, ...endpoint }) => ({ ...endpoint, name: `${endpoint.name} (Azure)`, pricing }))
    }
  ],
  form: {
    /**
     * What an Azure OpenAI resource starts from: its host, the api-version, a deployment per model
     * (`upstream_model` is the deployment's name); the key in the credential field, or `"auth": "entra"`.
     */
    start: {
      label: "Azure OpenAI",
      provider: {
        slug: "",
        name: "",
        adapter: id,
        base_url: "https://RESOURCE.openai.azure.com",
        api_version: "2024-10-21",
        data_collection: "deny",
        endpoints: [
          {
            model: "openai/text-embedding-3-small",
            upstream_model: "text-embedding-3-small",
            pricing: { prompt: "0.02" },
            dimensions: 1536,
            max_batch_items: 2048
          }
        ]
      }
    },
    credentialHint:
      `The resource's key, sent as api-key. Or leave it empty and add "auth": "entra" to sign with an Entra ID token of the gateway's identity (DefaultAzureCredential). ${storedHint}`
  }
})
