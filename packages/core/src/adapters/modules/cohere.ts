/**
 * Cohere's API: `POST /v2/embed` (several `embedding_types` in one answer) and `/v2/rerank`. Wire
 * format: `apps/server/src/providers/Cohere.ts`.
 *
 * @since 0.13.0
 */
import { define, long, none, storedHint } from "../ProviderModule.ts"

const id = "cohere"

/**
 * The quantized types Cohere's Embed makes (`embedding_types`), on Cohere and on Bedrock.
 *
 * @since 0.13.0
 */
export const cohereTypes = ["int8", "uint8", "binary", "ubinary"] as const

/**
 * @since 0.13.0
 */
export const cohere = define({
  id,
  name: "Cohere",
  kind: "api",
  fields: {},
  needs: [],
  baseUrl: { default: "https://api.cohere.com/v2", required: true },
  rerank: "text",
  inputModalities: ["text"],
  batchApi: none,
  nativeDtypes: () => cohereTypes,
  longInputs: () => long.both,
  catalog: [
    {
      slug: "cohere",
      name: "Cohere",
      adapter: id,
      base_url: "https://api.cohere.com/v2",
      api_key_env: "COHERE_API_KEY",
      // approx: states it does not train on API data; retention up to 30 days.
      data_collection: "deny",
      zdr: false,
      endpoints: [
        {
          model: "cohere/embed-english-v3.0",
          upstream_model: "embed-english-v3.0",
          name: "Cohere: Embed English v3",
          // image: approx, per image.
          pricing: { prompt: "0.1", image: "0.0001" },
          dimensions: 1024,
          supported_parameters: ["input_type", "encoding_format"],
          max_batch_items: 96,
          max_input_tokens: 512,
          output_dtypes: cohereTypes,
          input_modalities: ["text", "image"]
        },
        {
          model: "cohere/embed-multilingual-v3.0",
          upstream_model: "embed-multilingual-v3.0",
          name: "Cohere: Embed Multilingual v3",
          pricing: { prompt: "0.1", image: "0.0001" },
          dimensions: 1024,
          supported_parameters: ["input_type", "encoding_format"],
          max_batch_items: 96,
          max_input_tokens: 512,
          output_dtypes: cohereTypes,
          input_modalities: ["text", "image"]
        },
        {
          model: "cohere/embed-v4.0",
          upstream_model: "embed-v4.0",
          name: "Cohere: Embed v4",
          // Text $0.12/M tokens; images are billed as image tokens ($0.47/M), about $0.00047
          // per image of ~1,000 tokens (approx).
          pricing: { prompt: "0.12", image: "0.00047" },
          dimensions: 1536,
          supported_parameters: ["dimensions", "input_type", "encoding_format"],
          max_batch_items: 96,
          max_input_tokens: 128000,
          matryoshka: [256, 512, 1024, 1536],
          output_dtypes: cohereTypes,
          input_modalities: ["text", "image"]
        },
        // Rerank is billed per search: one query over up to 100 documents of up to 500 tokens.
        {
          model: "cohere/rerank-v3.5",
          upstream_model: "rerank-v3.5",
          task: "rerank",
          name: "Cohere: Rerank 3.5",
          pricing: { search: "2" },
          supported_parameters: ["max_tokens_per_doc"],
          max_documents: 1000,
          max_input_tokens: 4096
        },
        {
          model: "cohere/rerank-english-v3.0",
          upstream_model: "rerank-english-v3.0",
          task: "rerank",
          name: "Cohere: Rerank English 3",
          pricing: { search: "2" },
          supported_parameters: ["max_tokens_per_doc"],
          max_documents: 1000,
          max_input_tokens: 4096
        },
        {
          model: "cohere/rerank-multilingual-v3.0",
          upstream_model: "rerank-multilingual-v3.0",
          task: "rerank",
          name: "Cohere: Rerank Multilingual 3",
          pricing: { search: "2" },
          supported_parameters: ["max_tokens_per_doc"],
          max_documents: 1000,
          max_input_tokens: 4096
        }
      ]
    }
  ],
  form: { credentialHint: storedHint }
})
