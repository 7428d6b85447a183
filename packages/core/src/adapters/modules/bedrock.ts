/**
 * Amazon Bedrock: `InvokeModel` signed with SigV4 for the provider's `region` over the AWS
 * credential chain (or a Bedrock API key as a bearer), Titan and Cohere Embed, Amazon's and
 * Cohere's rerank, and batch inference over S3. Wire format: `apps/server/src/providers/Bedrock.ts`,
 * batches `BedrockBatch.ts`.
 *
 * @since 0.13.0
 */
import { type Environment, define, long } from "../ProviderModule.ts"
import { cohereTypes } from "./cohere.ts"

const id = "bedrock"

/**
 * The variables that say AWS credentials are configured for the default credential chain: keys,
 * a shared profile, a web identity token (EKS), a container role (ECS), or an instance role
 * opted into with `AWS_EC2_METADATA_DISABLED=false`. A `bedrock` provider without
 * `api_key_env` is active when one of them is set.
 *
 * @since 0.9.0
 */
export const awsCredentialEnv: ReadonlyArray<string> = [
  "AWS_ACCESS_KEY_ID",
  "AWS_PROFILE",
  "AWS_WEB_IDENTITY_TOKEN_FILE",
  "AWS_CONTAINER_CREDENTIALS_FULL_URI",
  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
  "AWS_EC2_METADATA_DISABLED"
]

const awsConfigured = (env: Environment): boolean =>
  awsCredentialEnv.some((name) => {
    const value = (env[name] ?? "").trim()
    return name === "AWS_EC2_METADATA_DISABLED" ? value.toLowerCase() === "false" : value !== ""
  })

/**
 * Bedrock's runtime endpoint in a region, when the provider names no `base_url`.
 *
 * @since 0.13.0
 */
export const bedrockBaseUrl = (region: string): string => `https://bedrock-runtime.${region}.amazonaws.com`

/**
 * @since 0.13.0
 */
export const bedrock = define({
  id,
  name: "Amazon Bedrock",
  kind: "cloud",
  fields: {},
  needs: ["region"],
  baseUrl: { default: bedrockBaseUrl("us-east-1"), required: false },
  rerank: "text",
  inputModalities: ["text"],
  batchApi: () => "bedrock",
  batchPlacement: {
    needs: [["s3_uri", "the S3 prefix its jobs' input and output go to"], ["role_arn", "the service role Bedrock reads and writes that prefix as"]],
    refuses: ["gcs_uri"]
  },
  nativeDtypes: () => cohereTypes,
  longInputs: (_provider, upstreamModel) => upstreamModel.includes("cohere.embed") ? long.both : long.none,
  identity: (provider, env) => provider.api_key_env === undefined || provider.api_key_env === null ? awsConfigured(env) : undefined,
  catalog: [
    {
      // Amazon Bedrock: InvokeModel signed with the AWS default credential chain; active when
      // the chain is configured (see Catalog.awsCredentialEnv). AWS does not store or train on
      // Bedrock prompts. Prices: us-east-1 on-demand list prices as published on the Bedrock
      // pricing page, read 2025-06; reviewed 2026-11-29 against public pages (the Bedrock
      // pricing page and third-party summaries agree on Titan v2 $0.00002 and Cohere Embed v3
      // $0.0001 per 1,000 tokens, rerank $1 (Amazon) and $2 (Cohere) per 1,000 queries; the
      // stored copy of the pricing page did not show its per-model table: approx).
      slug: "amazon-bedrock",
      name: "Amazon Bedrock",
      adapter: id,
      region: "us-east-1",
      data_collection: "deny",
      zdr: false,
      endpoints: [
        {
          model: "amazon/titan-embed-text-v2",
          upstream_model: "amazon.titan-embed-text-v2:0",
          name: "Amazon: Titan Text Embeddings V2",
          // $0.00002 per 1,000 input tokens.
          pricing: { prompt: "0.02" },
          dimensions: 1024,
          supported_parameters: ["dimensions", "encoding_format"],
          // One input per upstream call: a request fans out this many calls at most.
          max_batch_items: 128,
          max_input_tokens: 8192,
          matryoshka: [256, 512, 1024]
        },
        {
          model: "cohere/embed-english-v3.0",
          upstream_model: "cohere.embed-english-v3",
          name: "Cohere: Embed English v3 (Bedrock)",
          // $0.0001 per 1,000 input tokens.
          pricing: { prompt: "0.1" },
          dimensions: 1024,
          supported_parameters: ["input_type", "encoding_format"],
          max_batch_items: 96,
          max_input_tokens: 512,
          output_dtypes: cohereTypes
        },
        {
          model: "cohere/embed-multilingual-v3.0",
          upstream_model: "cohere.embed-multilingual-v3",
          name: "Cohere: Embed Multilingual v3 (Bedrock)",
          pricing: { prompt: "0.1" },
          dimensions: 1024,
          supported_parameters: ["input_type", "encoding_format"],
          max_batch_items: 96,
          max_input_tokens: 512,
          output_dtypes: cohereTypes
        },
        {
          model: "cohere/embed-v4.0",
          upstream_model: "cohere.embed-v4:0",
          name: "Cohere: Embed v4 (Bedrock)",
          // approx: $0.12 per million input tokens, as Cohere's own.
          pricing: { prompt: "0.12" },
          dimensions: 1536,
          supported_parameters: ["dimensions", "input_type", "encoding_format"],
          max_batch_items: 96,
          max_input_tokens: 128000,
          matryoshka: [256, 512, 1024, 1536],
          output_dtypes: cohereTypes
        },
        // Rerank is billed per query of up to 100 documents: $2.00 (Cohere) and $1.00 (Amazon)
        // per 1,000.
        {
          model: "cohere/rerank-v3.5",
          upstream_model: "cohere.rerank-v3-5:0",
          task: "rerank",
          name: "Cohere: Rerank 3.5 (Bedrock)",
          pricing: { search: "2" },
          max_documents: 1000,
          max_input_tokens: 4096
        },
        {
          model: "amazon/rerank-v1.0",
          upstream_model: "amazon.rerank-v1:0",
          task: "rerank",
          name: "Amazon: Rerank 1.0",
          pricing: { search: "1" },
          max_documents: 1000,
          max_input_tokens: 4096
        }
      ]
    }
  ],
  form: {
    start: {
      label: "Amazon Bedrock",
      provider: {
        slug: "",
        name: "",
        adapter: id,
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
    },
    credentialHint:
      "Optional: a Bedrock API key. Left empty, calls are signed with the gateway's AWS credentials (environment, profile, web identity, container or instance role)."
  }
})
