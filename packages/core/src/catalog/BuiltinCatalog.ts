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
import * as Catalog from "./Catalog.ts"

/**
 * The in-process model every install can serve without credentials.
 *
 * @since 0.1.0
 */
export const localModel = "switchyard/local-embed"

/**
 * The in-process rerank model every install can serve without credentials.
 *
 * @since 0.4.0
 */
const localRerankModel = "switchyard/local-rerank"

/**
 * The width of {@link localModel}'s vectors unless `dimensions` asks otherwise.
 *
 * @since 0.1.0
 */
export const localDimensions = 256

const openAiParams = ["dimensions", "encoding_format", "user"]

/** The quantized types Cohere's Embed makes (`embedding_types`), on Cohere and on Bedrock. */
const cohereTypes = ["int8", "uint8", "binary", "ubinary"]

/** Voyage's Matryoshka widths (`output_dimension`) and types (`output_dtype`) of its 3.5 and 3-large families. */
const voyageWidths = [256, 512, 1024, 2048]
const voyageTypes = ["int8", "uint8", "binary", "ubinary"]

// Where the built-in Azure and Vertex providers point until the environment places them: hosts
// and projects that are nobody's (the reserved `.invalid` name), on providers listed disabled.
const unplacedAzure = "https://unplaced.invalid"
const unplacedProject = "unplaced"

// Written in the config file's own format and decoded through the same schema, so a typo here
// fails the test suite exactly as it would fail an operator's file.
/** OpenAI's embedding models, as OpenAI and Azure OpenAI serve them. */
const openAiEndpoints = [
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

const source = {
  providers: [
    {
      slug: "local",
      name: "Switchyard local",
      adapter: "local",
      api_key_env: null,
      data_collection: "deny",
      zdr: true,
      endpoints: [{
        model: localModel,
        upstream_model: "local-embed-v1",
        name: "Switchyard: Local Embed",
        description: "Deterministic feature-hashing embedder running inside the gateway; no network, no key.",
        pricing: { prompt: "0" },
        quantization: "fp32",
        dimensions: localDimensions,
        supported_parameters: ["dimensions", "encoding_format", "input_type", "user"],
        max_batch_items: 2048,
        distillable: true,
        max_input_tokens: 8192,
        input_modalities: ["text", "tokens", "image", "audio", "video", "file"]
      }, {
        model: localRerankModel,
        upstream_model: "local-rerank-v1",
        task: "rerank",
        name: "Switchyard: Local Rerank",
        description: "Scores documents by the cosine of their local-embed vectors with the query's, inside the gateway; no network, no key.",
        pricing: { prompt: "0" },
        quantization: "fp32",
        supported_parameters: ["max_tokens_per_doc"],
        max_documents: 1000,
        distillable: true,
        input_modalities: ["text"]
      }]
    },
    {
      slug: "openai",
      name: "OpenAI",
      adapter: "openai",
      dialect: "openai",
      base_url: "https://api.openai.com/v1",
      api_key_env: "OPENAI_API_KEY",
      // Does not train on API data by default; keeps it up to 30 days for abuse monitoring.
      data_collection: "deny",
      zdr: false,
      endpoints: openAiEndpoints
    },
    {
      slug: "cohere",
      name: "Cohere",
      adapter: "cohere",
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
    },
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
      adapter: "bedrock",
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
    },
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
      adapter: "azure",
      base_url: unplacedAzure,
      api_version: "2024-10-21",
      api_key_env: "AZURE_OPENAI_API_KEY",
      enabled: false,
      data_collection: "deny",
      zdr: false,
      // OpenAI's models at their list price; Azure's batch runs on a deployment of its own.
      endpoints: openAiEndpoints.map(({ pricing: { batch: _, ...pricing }, ...endpoint }) => ({ ...endpoint, name: `${endpoint.name} (Azure)`, pricing }))
    },
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
      adapter: "vertex",
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
    },
    {
      slug: "voyage",
      name: "Voyage AI",
      adapter: "voyage",
      base_url: "https://api.voyageai.com/v1",
      api_key_env: "VOYAGE_API_KEY",
      // approx: may use API data to improve models unless the account opts out. The Batch API
      // (12-hour window) is 33 % off the list price (Voyage's batch inference guide).
      data_collection: "allow",
      zdr: false,
      endpoints: [
        {
          model: "voyage/voyage-3.5",
          upstream_model: "voyage-3.5",
          name: "Voyage: voyage-3.5",
          pricing: { prompt: "0.06", batch: { prompt: "0.0402" } },
          dimensions: 1024,
          supported_parameters: ["dimensions", "input_type", "encoding_format"],
          max_batch_items: 1000,
          max_input_tokens: 32000,
          matryoshka: voyageWidths,
          output_dtypes: voyageTypes
        },
        {
          model: "voyage/voyage-3.5-lite",
          upstream_model: "voyage-3.5-lite",
          name: "Voyage: voyage-3.5-lite",
          pricing: { prompt: "0.02", batch: { prompt: "0.0134" } },
          dimensions: 1024,
          supported_parameters: ["dimensions", "input_type", "encoding_format"],
          max_batch_items: 1000,
          max_input_tokens: 32000,
          matryoshka: voyageWidths,
          output_dtypes: voyageTypes
        },
        {
          model: "voyage/voyage-3-large",
          upstream_model: "voyage-3-large",
          name: "Voyage: voyage-3-large",
          pricing: { prompt: "0.18", batch: { prompt: "0.1206" } },
          dimensions: 1024,
          supported_parameters: ["dimensions", "input_type", "encoding_format"],
          max_batch_items: 1000,
          max_input_tokens: 32000,
          matryoshka: voyageWidths,
          output_dtypes: voyageTypes
        },
        {
          model: "voyage/voyage-code-3",
          upstream_model: "voyage-code-3",
          name: "Voyage: voyage-code-3",
          pricing: { prompt: "0.18", batch: { prompt: "0.1206" } },
          dimensions: 1024,
          supported_parameters: ["dimensions", "input_type", "encoding_format"],
          max_batch_items: 1000,
          max_input_tokens: 32000,
          matryoshka: voyageWidths,
          output_dtypes: voyageTypes
        },
        // Rerank is billed per token: the query once per document, plus the documents.
        {
          model: "voyage/rerank-2.5",
          upstream_model: "rerank-2.5",
          task: "rerank",
          name: "Voyage: rerank-2.5",
          pricing: { prompt: "0.05" },
          max_documents: 1000,
          max_input_tokens: 32000
        },
        {
          model: "voyage/rerank-2.5-lite",
          upstream_model: "rerank-2.5-lite",
          task: "rerank",
          name: "Voyage: rerank-2.5-lite",
          pricing: { prompt: "0.02" },
          max_documents: 1000,
          max_input_tokens: 32000
        }
      ]
    },
    {
      slug: "mistral",
      name: "Mistral",
      adapter: "openai",
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
      slug: "google-ai-studio",
      name: "Google AI Studio",
      adapter: "gemini",
      base_url: "https://generativelanguage.googleapis.com/v1beta",
      api_key_env: "GEMINI_API_KEY",
      // The free tier may use prompts to improve Google products; the same key can be on it.
      data_collection: "allow",
      zdr: false,
      endpoints: [
        {
          model: "google/gemini-embedding-001",
          upstream_model: "gemini-embedding-001",
          name: "Google: Gemini Embedding 001",
          // Batch Mode at half ($0.075 per million tokens, Google's announcement of 2025-09-10).
          pricing: { prompt: "0.15", batch: { prompt: "0.075" } },
          dimensions: 3072,
          supported_parameters: ["dimensions", "input_type"],
          max_batch_items: 100,
          max_input_tokens: 2048,
          matryoshka: true
        },
        {
          // Free of charge on the Gemini API; deprecated by Google in favour of
          // gemini-embedding-001 (approx: shutdown date may have passed).
          model: "google/text-embedding-004",
          upstream_model: "text-embedding-004",
          name: "Google: Text Embedding 004",
          pricing: { prompt: "0" },
          dimensions: 768,
          supported_parameters: ["dimensions", "input_type"],
          max_batch_items: 100,
          max_input_tokens: 2048
        }
      ]
    },
    {
      slug: "jina",
      name: "Jina AI",
      adapter: "jina",
      base_url: "https://api.jina.ai/v1",
      api_key_env: "JINA_API_KEY",
      // approx: no published no-training commitment found.
      data_collection: "allow",
      zdr: false,
      endpoints: [{
        model: "jinaai/jina-embeddings-v3",
        upstream_model: "jina-embeddings-v3",
        // The OpenAI-compatible API of this provider takes no token ids.
        input_modalities: ["text"],
        name: "Jina: jina-embeddings-v3",
        // approx: sold as prepaid token packs; this is the per-million rate of the common pack.
        pricing: { prompt: "0.05" },
        dimensions: 1024,
        supported_parameters: ["dimensions", "input_type", "encoding_format"],
        max_batch_items: 2048,
        max_input_tokens: 8192,
        matryoshka: true,
        output_dtypes: ["binary", "ubinary"]
      }, {
        model: "jinaai/jina-embeddings-v4",
        upstream_model: "jina-embeddings-v4",
        input_modalities: ["text"],
        name: "Jina: jina-embeddings-v4",
        // approx: as jina-embeddings-v3.
        pricing: { prompt: "0.05" },
        dimensions: 2048,
        supported_parameters: ["dimensions", "input_type", "encoding_format"],
        max_batch_items: 2048,
        max_input_tokens: 32768,
        matryoshka: true,
        output_dtypes: ["binary", "ubinary"]
      }, {
        model: "jinaai/jina-reranker-v2-base-multilingual",
        upstream_model: "jina-reranker-v2-base-multilingual",
        task: "rerank",
        name: "Jina: jina-reranker-v2-base-multilingual",
        // approx: the per-million rate of the common token pack, as for the embeddings.
        pricing: { prompt: "0.05" },
        max_documents: 2048,
        max_input_tokens: 1024
      }, {
        model: "jinaai/jina-reranker-m0",
        upstream_model: "jina-reranker-m0",
        task: "rerank",
        // Ranks page images as well as text (documents `{ "image": url or base64 }`).
        input_modalities: ["text", "image"],
        name: "Jina: jina-reranker-m0",
        // approx: as above.
        pricing: { prompt: "0.05" },
        max_documents: 2048,
        max_input_tokens: 10240
      }]
    },
    {
      slug: "together",
      name: "Together AI",
      adapter: "openai",
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
      adapter: "openai",
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
      adapter: "openai",
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
