/**
 * Jina AI: OpenAI-compatible embeddings in Jina's dialect (`embedding_type`, `task`), and Jina's
 * rerank, which takes image documents. Wire format: `apps/server/src/providers/Jina.ts` over
 * `OpenAiCompatible.ts`.
 *
 * @since 0.13.0
 */
import { define, long, none, storedHint } from "../ProviderModule.ts"

const id = "jina"

/**
 * @since 0.13.0
 */
export const jina = define({
  id,
  name: "Jina AI",
  kind: "api",
  fields: {},
  needs: [],
  baseUrl: { default: "https://api.jina.ai/v1", required: true },
  rerank: "text-and-image",
  inputModalities: ["text", "image"],
  batchApi: none,
  nativeDtypes: () => ["binary", "ubinary"],
  longInputs: () => long.end,
  catalog: [
    {
      slug: "jina",
      name: "Jina AI",
      adapter: id,
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
    }
  ],
  form: { credentialHint: storedHint }
})
