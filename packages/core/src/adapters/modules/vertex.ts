/**
 * Google Vertex AI: `:predict` and the Ranking API under a Google identity's token, and batch
 * prediction jobs over Cloud Storage. Wire format: `apps/server/src/providers/Vertex.ts`, batches
 * `VertexBatch.ts`.
 *
 * @since 0.13.0
 */
import { Schema } from "effect"
import { NonEmptyString } from "../Fields.ts"
import { anySet, define, long, noDtypes } from "../ProviderModule.ts"

const id = "vertex"

/**
 * The variables that say a Google identity is at hand (Application Default Credentials).
 *
 * @since 0.13.0
 */
export const googleIdentity: ReadonlyArray<string> = ["GOOGLE_APPLICATION_CREDENTIALS", "GCE_METADATA_HOST"]

/**
 * Where the built-in Vertex provider points until the environment places it: a project that is
 * nobody's, on a provider listed disabled.
 *
 * @since 0.13.0
 */
export const unplacedProject = "unplaced"

/**
 * Where a Vertex provider is reached when its config names no `base_url`: its location's host.
 *
 * @since 0.9.0
 */
export const vertexBaseUrl = (location: string): string => `https://${location}-aiplatform.googleapis.com`

/**
 * @since 0.13.0
 */
export const vertex = define({
  id,
  name: "Google Vertex AI",
  kind: "cloud",
  /** `project`, `location` and `credentials_file` (a service-account file; absent, Application Default Credentials). */
  fields: {
    project: Schema.optionalKey(NonEmptyString),
    location: Schema.optionalKey(NonEmptyString),
    credentials_file: Schema.optionalKey(NonEmptyString)
  },
  needs: ["project", "location"],
  baseUrl: { default: vertexBaseUrl("us-central1"), required: false },
  rerank: "text",
  inputModalities: ["text"],
  batchApi: () => "vertex",
  batchPlacement: {
    needs: [["gcs_uri", "the Cloud Storage prefix its jobs' input and output go to"]],
    refuses: ["s3_uri", "role_arn", "base_url"]
  },
  nativeDtypes: noDtypes,
  longInputs: () => long.end,
  // Application Default Credentials: a service-account file, or the metadata server of GCE/GKE.
  identity: (provider, env) => provider.credentials_file !== undefined || anySet(env, googleIdentity),
  catalog: [
    {
      // Google Vertex AI: a project's own, so listed disabled until `GOOGLE_CLOUD_PROJECT` names
      // it (`GOOGLE_CLOUD_LOCATION` the region, default us-central1; see {@link placed}); then
      // active when Application Default Credentials are at hand. Google does not train on
      // Vertex AI data without permission. Prices read 2026-11-29 from public pages (approx):
      // gemini-embedding-001 $0.15 per million tokens; text-embedding-005 and
      // text-multilingual-embedding-002 $0.000025 per 1,000 characters, about $0.1 per million
      // tokens at four characters a token; the Ranking API $1 per 1,000 queries of up to 100
      // records.
      slug: "google-vertex",
      name: "Google Vertex AI",
      adapter: id,
      project: unplacedProject,
      location: "us-central1",
      enabled: false,
      data_collection: "deny",
      zdr: false,
      endpoints: [
        {
          model: "google/gemini-embedding-001",
          upstream_model: "gemini-embedding-001",
          name: "Google: Gemini Embedding 001 (Vertex)",
          pricing: { prompt: "0.15" },
          dimensions: 3072,
          supported_parameters: ["dimensions", "input_type"],
          // Vertex takes one instance per call for this model.
          max_batch_items: 1,
          max_input_tokens: 2048,
          matryoshka: true
        },
        {
          model: "google/text-embedding-005",
          upstream_model: "text-embedding-005",
          name: "Google: Text Embedding 005",
          pricing: { prompt: "0.1" },
          dimensions: 768,
          supported_parameters: ["dimensions", "input_type"],
          max_batch_items: 250,
          max_input_tokens: 2048
        },
        {
          model: "google/text-multilingual-embedding-002",
          upstream_model: "text-multilingual-embedding-002",
          name: "Google: Text Multilingual Embedding 002",
          pricing: { prompt: "0.1" },
          dimensions: 768,
          supported_parameters: ["dimensions", "input_type"],
          max_batch_items: 250,
          max_input_tokens: 2048
        },
        {
          model: "google/semantic-ranker-default-004",
          upstream_model: "semantic-ranker-default-004",
          task: "rerank",
          name: "Google: Semantic Ranker Default 004",
          pricing: { search: "1" },
          max_documents: 200,
          max_input_tokens: 1024
        },
        {
          model: "google/semantic-ranker-fast-004",
          upstream_model: "semantic-ranker-fast-004",
          task: "rerank",
          name: "Google: Semantic Ranker Fast 004",
          pricing: { search: "1" },
          max_documents: 200,
          max_input_tokens: 1024
        }
      ]
    }
  ],
  form: {
    /** What Vertex AI starts from: a project and location, signed with the gateway's Google identity. */
    start: {
      label: "Google Vertex AI",
      provider: {
        slug: "",
        name: "",
        adapter: id,
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
    },
    credentialHint:
      "Leave empty: calls carry a token of the gateway's Google identity (\"credentials_file\", GOOGLE_APPLICATION_CREDENTIALS, or the metadata server of GKE/GCE)."
  }
})
