/**
 * The providers page's editor: a provider is written as the config file has it (JSON), and a
 * change is sent as the top-level fields that differ (`PATCH` replaces each field it names).
 */

export type ProviderJson = Record<string, unknown>

/** What the add form starts from: a provider with one embeddings endpoint, to fill in. */
export const template: ProviderJson = {
  slug: "",
  name: "",
  adapter: "openai",
  base_url: "https://api.example.com/v1",
  data_collection: "deny",
  endpoints: [
    {
      model: "author/model",
      upstream_model: "model",
      pricing: { prompt: "0.00000002" },
      dimensions: 1536,
      max_batch_items: 2048
    }
  ]
}

/** What a provider on Amazon Bedrock starts from: signed with the gateway's AWS credentials in a region. */
const bedrockTemplate: ProviderJson = {
  slug: "",
  name: "",
  adapter: "bedrock",
  region: "us-east-1",
  data_collection: "deny",
  endpoints: [
    {
      model: "amazon/titan-embed-text-v2",
      upstream_model: "amazon.titan-embed-text-v2:0",
      pricing: { prompt: "0.02" },
      dimensions: 1024,
      max_batch_items: 128
    }
  ]
}

/**
 * What an Azure OpenAI resource starts from: its host, the api-version, a deployment per model
 * (`upstream_model` is the deployment's name); the key in the credential field, or `"auth": "entra"`.
 */
const azureTemplate: ProviderJson = {
  slug: "",
  name: "",
  adapter: "azure",
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

/** What Vertex AI starts from: a project and location, signed with the gateway's Google identity. */
const vertexTemplate: ProviderJson = {
  slug: "",
  name: "",
  adapter: "vertex",
  project: "my-project",
  location: "us-central1",
  data_collection: "deny",
  endpoints: [
    {
      model: "google/text-embedding-005",
      upstream_model: "text-embedding-005",
      pricing: { prompt: "0.1" },
      dimensions: 768,
      max_batch_items: 250
    },
    {
      model: "google/semantic-ranker-default-004",
      upstream_model: "semantic-ranker-default-004",
      task: "rerank",
      pricing: { search: "1" }
    }
  ]
}

/**
 * What a self-hosted model server starts from: its replicas, and its models discovered (the
 * gateway asks the server what it serves). The adapter may be changed to infinity, ollama or vllm.
 */
const selfHostedTemplate: ProviderJson = {
  slug: "",
  name: "",
  adapter: "tei",
  base_urls: ["http://tei-0:80"],
  data_collection: "deny",
  discover: true,
  discover_interval_s: 60,
  default_pricing: { prompt: "0" }
}

/** The add form's starting points, by the adapter each is written for. */
export const templates: ReadonlyArray<{ readonly adapter: string; readonly label: string; readonly provider: ProviderJson }> = [
  { adapter: "openai", label: "OpenAI-compatible API", provider: template },
  { adapter: "azure", label: "Azure OpenAI", provider: azureTemplate },
  { adapter: "bedrock", label: "Amazon Bedrock", provider: bedrockTemplate },
  { adapter: "vertex", label: "Google Vertex AI", provider: vertexTemplate },
  { adapter: "tei", label: "Own model server, models discovered (TEI, Infinity, Ollama, vLLM)", provider: selfHostedTemplate }
]

const storedHint = "Stored encrypted and never shown again: only whether it is set and its last 4 characters."

/** What the add form says of the credential field for a provider of this adapter. */
export const credentialHint = (adapter: unknown): string =>
  adapter === "bedrock"
    ? "Optional: a Bedrock API key. Left empty, calls are signed with the gateway's AWS credentials (environment, profile, web identity, container or instance role)."
    : adapter === "azure"
    ? `The resource's key, sent as api-key. Or leave it empty and add "auth": "entra" to sign with an Entra ID token of the gateway's identity (DefaultAzureCredential). ${storedHint}`
    : adapter === "tei" || adapter === "infinity" || adapter === "ollama" || adapter === "vllm"
    ? `Optional: the server's API key (TEI's --api-key), sent as a bearer. With "discover": true every model the server lists is served as <slug>/<server id>. ${storedHint}`
    : adapter === "vertex"
    ? "Leave empty: calls carry a token of the gateway's Google identity (\"credentials_file\", GOOGLE_APPLICATION_CREDENTIALS, or the metadata server of GKE/GCE)."
    : storedHint

export type Parsed =
  | { readonly _tag: "Ok"; readonly value: ProviderJson }
  | { readonly _tag: "Invalid"; readonly message: string }

/** The text as one JSON object, or why not. */
export const parse = (text: string): Parsed => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { _tag: "Invalid", message: `The provider is not valid JSON: ${(error as Error).message}` }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? { _tag: "Ok", value: value as ProviderJson }
    : { _tag: "Invalid", message: "The provider must be one JSON object, as in the config file" }
}

export type Patch =
  | { readonly _tag: "Patch"; readonly fields: ProviderJson }
  | { readonly _tag: "Invalid"; readonly message: string }

/**
 * The `PATCH` body that turns `stored` into `edited`: every top-level field whose value differs.
 * The slug cannot change, and a field cannot be removed through `PATCH` (it would keep its value).
 */
export const patch = (stored: ProviderJson, edited: ProviderJson): Patch => {
  if (Object.hasOwn(edited, "slug") && edited.slug !== stored.slug) {
    return { _tag: "Invalid", message: "The slug cannot change: add a provider under the new slug instead" }
  }
  const removed = Object.keys(stored).filter((field) => field !== "slug" && !Object.hasOwn(edited, field))
  if (removed.length > 0) {
    return {
      _tag: "Invalid",
      message: `A field cannot be removed here (${removed.join(", ")}): give it another value, or delete the provider and add it again`
    }
  }
  const fields = Object.fromEntries(
    Object.entries(edited).filter(([field, value]) => field !== "slug" && JSON.stringify(value) !== JSON.stringify(stored[field]))
  )
  return { _tag: "Patch", fields }
}

/** The stored credential in words: never more than whether it is set and its last 4 characters. */
export const credential = (apiKey: { readonly set: boolean; readonly last4: string | null } | undefined): string =>
  apiKey === undefined ? "-" : !apiKey.set ? "not set" : apiKey.last4 === null ? "set" : `set, ends in ${apiKey.last4}`
