/**
 * Any OpenAI-compatible embeddings API (OpenAI's own, Mistral, Together, Fireworks, DeepInfra,
 * a gateway in front of a model server) in one of its dialects; its rerank endpoints speak Jina's
 * rerank shape, as vLLM and other OpenAI-compatible hosts do. Wire format:
 * `apps/server/src/providers/OpenAiCompatible.ts`, batches `OpenAiBatch.ts` and `MistralBatch.ts`.
 *
 * @since 0.13.0
 */
import { define, long, storedHint } from "../ProviderModule.ts"

const id = "openai"

const openAiParams = ["dimensions", "encoding_format", "user"]

// Written in the config file's own format and decoded through the same schema, so a typo here
// fails the test suite exactly as it would fail an operator's file.
/**
 * OpenAI's embedding models, as OpenAI and Azure OpenAI serve them.
 *
 * @since 0.13.0
 */
export const openAiEndpoints = [
  {
    model: "openai/text-embedding-3-small",
    upstream_model: "text-embedding-3-small",
    name: "OpenAI: Text Embedding 3 Small",
    pricing: { prompt: "0.02", batch: { prompt: "0.01" } },
    dimensions: 1536,
    supported_parameters: openAiParams,
    max_batch_items: 2048,
    max_input_tokens: 8191,
    matryoshka: true,
    input_modalities: ["text", "tokens"]
  },
  {
    model: "openai/text-embedding-3-large",
    upstream_model: "text-embedding-3-large",
    name: "OpenAI: Text Embedding 3 Large",
    pricing: { prompt: "0.13", batch: { prompt: "0.065" } },
    dimensions: 3072,
    supported_parameters: openAiParams,
    max_batch_items: 2048,
    max_input_tokens: 8191,
    matryoshka: true,
    input_modalities: ["text", "tokens"]
  },
  {
    model: "openai/text-embedding-ada-002",
    upstream_model: "text-embedding-ada-002",
    name: "OpenAI: Text Embedding Ada 002",
    pricing: { prompt: "0.1", batch: { prompt: "0.05" } },
    dimensions: 1536,
    supported_parameters: ["encoding_format", "user"],
    max_batch_items: 2048,
    max_input_tokens: 8191,
    input_modalities: ["text", "tokens"]
  }
]

/**
 * @since 0.13.0
 */
export const openai = define({
  id,
  name: "OpenAI-compatible API",
  kind: "api",
  fields: {},
  needs: [],
  baseUrl: { default: "https://api.openai.com/v1", required: true },
  rerank: "text-and-image",
  inputModalities: ["text", "tokens"],
  batchApi: (provider) => provider.dialect === "openai" ? "openai" : provider.dialect === "mistral" ? "mistral" : undefined,
  nativeDtypes: (provider) =>
    provider.dialect === "mistral" ? ["int8", "uint8", "binary", "ubinary"] : provider.dialect === "jina" ? ["binary", "ubinary"] : [],
  longInputs: (provider) => provider.dialect === "jina" ? long.end : long.none,
  catalog: [
    {
      slug: "openai",
      name: "OpenAI",
      adapter: id,
      dialect: "openai",
      base_url: "https://api.openai.com/v1",
      api_key_env: "OPENAI_API_KEY",
      // Does not train on API data by default; keeps it up to 30 days for abuse monitoring.
      data_collection: "deny",
      zdr: false,
      endpoints: openAiEndpoints
    },
    {
      slug: "mistral",
      name: "Mistral",
      adapter: id,
      dialect: "mistral",
      base_url: "https://api.mistral.ai/v1",
      api_key_env: "MISTRAL_API_KEY",
      // approx: paid API data is not used for training; retained for abuse monitoring.
      data_collection: "deny",
      zdr: false,
      endpoints: [{
        model: "mistralai/mistral-embed",
        upstream_model: "mistral-embed",
        // The OpenAI-compatible API of this provider takes no token ids.
        input_modalities: ["text"],
        name: "Mistral: Mistral Embed",
        // Batch jobs at half.
        pricing: { prompt: "0.1", batch: { prompt: "0.05" } },
        dimensions: 1024,
        supported_parameters: ["encoding_format"],
        // approx: Mistral limits total tokens per request rather than items.
        max_batch_items: 128,
        max_input_tokens: 8192
      }, {
        model: "mistralai/codestral-embed",
        upstream_model: "codestral-embed",
        input_modalities: ["text"],
        name: "Mistral: Codestral Embed",
        // approx: $0.15 per million tokens.
        pricing: { prompt: "0.15" },
        dimensions: 1536,
        supported_parameters: ["dimensions", "encoding_format"],
        max_batch_items: 128,
        max_input_tokens: 8192,
        // Any width up to 3,072 through output_dimension (1,536 by default).
        matryoshka: [256, 512, 1024, 1536, 3072],
        output_dtypes: ["int8", "uint8", "binary", "ubinary"]
      }]
    },
    {
      slug: "together",
      name: "Together AI",
      adapter: id,
      dialect: "together",
      base_url: "https://api.together.xyz/v1",
      api_key_env: "TOGETHER_API_KEY",
      // approx: training on customer data is opt-in; prompts may be retained.
      data_collection: "deny",
      zdr: false,
      endpoints: [
        {
          model: "baai/bge-large-en-v1.5",
          upstream_model: "BAAI/bge-large-en-v1.5",
          // The OpenAI-compatible API of this provider takes no token ids.
          input_modalities: ["text"],
          name: "BAAI: bge-large-en-v1.5",
          pricing: { prompt: "0.016" },
          dimensions: 1024,
          max_batch_items: 2048,
          distillable: true,
          max_input_tokens: 512,
          hugging_face_id: "BAAI/bge-large-en-v1.5"
        },
        {
          model: "baai/bge-base-en-v1.5",
          upstream_model: "BAAI/bge-base-en-v1.5",
          // The OpenAI-compatible API of this provider takes no token ids.
          input_modalities: ["text"],
          name: "BAAI: bge-base-en-v1.5",
          pricing: { prompt: "0.008" },
          dimensions: 768,
          max_batch_items: 2048,
          distillable: true,
          max_input_tokens: 512,
          hugging_face_id: "BAAI/bge-base-en-v1.5"
        },
        {
          model: "intfloat/multilingual-e5-large-instruct",
          upstream_model: "intfloat/multilingual-e5-large-instruct",
          // The OpenAI-compatible API of this provider takes no token ids.
          input_modalities: ["text"],
          name: "intfloat: multilingual-e5-large-instruct",
          pricing: { prompt: "0.02" },
          dimensions: 1024,
          max_batch_items: 2048,
          distillable: true,
          max_input_tokens: 514,
          hugging_face_id: "intfloat/multilingual-e5-large-instruct"
        }
      ]
    },
    {
      slug: "fireworks",
      name: "Fireworks",
      adapter: id,
      dialect: "fireworks",
      base_url: "https://api.fireworks.ai/inference/v1",
      api_key_env: "FIREWORKS_API_KEY",
      // approx: serverless inference is zero-retention by default.
      data_collection: "deny",
      zdr: true,
      endpoints: [
        {
          model: "nomic-ai/nomic-embed-text-v1.5",
          upstream_model: "nomic-ai/nomic-embed-text-v1.5",
          // The OpenAI-compatible API of this provider takes no token ids.
          input_modalities: ["text"],
          name: "Nomic: nomic-embed-text-v1.5",
          // Fireworks bills embedding models by size: up to 150M parameters $0.008/M (approx).
          pricing: { prompt: "0.008" },
          dimensions: 768,
          supported_parameters: ["dimensions"],
          max_batch_items: 256,
          distillable: true,
          max_input_tokens: 8192,
          matryoshka: [64, 128, 256, 512, 768],
          hugging_face_id: "nomic-ai/nomic-embed-text-v1.5"
        },
        {
          model: "baai/bge-base-en-v1.5",
          upstream_model: "BAAI/bge-base-en-v1.5",
          // The OpenAI-compatible API of this provider takes no token ids.
          input_modalities: ["text"],
          name: "BAAI: bge-base-en-v1.5",
          pricing: { prompt: "0.008" },
          dimensions: 768,
          max_batch_items: 256,
          distillable: true,
          max_input_tokens: 512,
          hugging_face_id: "BAAI/bge-base-en-v1.5"
        }
      ]
    },
    {
      slug: "deepinfra",
      name: "DeepInfra",
      adapter: id,
      dialect: "deepinfra",
      base_url: "https://api.deepinfra.com/v1/openai",
      api_key_env: "DEEPINFRA_API_KEY",
      // approx: states inputs and outputs are not stored.
      data_collection: "deny",
      zdr: true,
      endpoints: [
        {
          model: "baai/bge-m3",
          upstream_model: "BAAI/bge-m3",
          // The OpenAI-compatible API of this provider takes no token ids.
          input_modalities: ["text"],
          name: "BAAI: bge-m3",
          pricing: { prompt: "0.01" },
          dimensions: 1024,
          supported_parameters: ["encoding_format"],
          max_batch_items: 1024,
          distillable: true,
          max_input_tokens: 8192,
          hugging_face_id: "BAAI/bge-m3"
        },
        {
          model: "baai/bge-large-en-v1.5",
          upstream_model: "BAAI/bge-large-en-v1.5",
          // The OpenAI-compatible API of this provider takes no token ids.
          input_modalities: ["text"],
          name: "BAAI: bge-large-en-v1.5",
          pricing: { prompt: "0.01" },
          dimensions: 1024,
          supported_parameters: ["encoding_format"],
          max_batch_items: 1024,
          distillable: true,
          max_input_tokens: 512,
          hugging_face_id: "BAAI/bge-large-en-v1.5"
        },
        {
          model: "intfloat/multilingual-e5-large",
          upstream_model: "intfloat/multilingual-e5-large",
          // The OpenAI-compatible API of this provider takes no token ids.
          input_modalities: ["text"],
          name: "intfloat: multilingual-e5-large",
          pricing: { prompt: "0.01" },
          dimensions: 1024,
          supported_parameters: ["encoding_format"],
          max_batch_items: 1024,
          distillable: true,
          max_input_tokens: 512,
          hugging_face_id: "intfloat/multilingual-e5-large"
        },
        {
          model: "qwen/qwen3-embedding-8b",
          upstream_model: "Qwen/Qwen3-Embedding-8B",
          // The OpenAI-compatible API of this provider takes no token ids.
          input_modalities: ["text"],
          name: "Qwen: Qwen3 Embedding 8B",
          // approx.
          pricing: { prompt: "0.01" },
          dimensions: 4096,
          supported_parameters: ["dimensions", "encoding_format"],
          max_batch_items: 256,
          distillable: true,
          max_input_tokens: 32768,
          hugging_face_id: "Qwen/Qwen3-Embedding-8B"
        }
      ]
    }
  ],
  form: {
    start: {
      label: "OpenAI-compatible API",
      provider: {
        slug: "",
        name: "",
        adapter: id,
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
    },
    credentialHint: storedHint
  }
})
