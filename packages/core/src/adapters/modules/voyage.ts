/**
 * Voyage AI's API: `POST /v1/embeddings` (`output_dimension`, `output_dtype`) and `/v1/rerank`, and
 * its Batch API. Wire format: `apps/server/src/providers/Voyage.ts`, batches `VoyageBatch.ts`.
 *
 * @since 0.13.0
 */
import { define, long, storedHint } from "../ProviderModule.ts"

const id = "voyage"

/** Voyage's Matryoshka widths (`output_dimension`) and types (`output_dtype`) of its 3.5 and 3-large families. */
const voyageWidths = [256, 512, 1024, 2048]
const voyageTypes = ["int8", "uint8", "binary", "ubinary"] as const

/**
 * @since 0.13.0
 */
export const voyage = define({
  id,
  name: "Voyage AI",
  kind: "api",
  fields: {},
  needs: [],
  baseUrl: { default: "https://api.voyageai.com/v1", required: true },
  rerank: "text",
  inputModalities: ["text"],
  batchApi: () => "voyage",
  nativeDtypes: () => voyageTypes,
  longInputs: () => long.end,
  catalog: [
    {
      slug: "voyage",
      name: "Voyage AI",
      adapter: id,
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
    }
  ],
  form: { credentialHint: storedHint }
})
