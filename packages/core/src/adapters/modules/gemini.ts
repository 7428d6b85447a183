/**
 * The Gemini API (Google AI Studio): `batchEmbedContents` with an `x-goog-api-key`, and its batch
 * embeddings. Wire format: `apps/server/src/providers/Gemini.ts`, batches `GeminiBatch.ts`.
 *
 * @since 0.13.0
 */
import { define, long, noDtypes, storedHint } from "../ProviderModule.ts"

const id = "gemini"

/**
 * @since 0.13.0
 */
export const gemini = define({
  id,
  name: "Google AI Studio (Gemini API)",
  kind: "api",
  fields: {},
  needs: [],
  baseUrl: { default: "https://generativelanguage.googleapis.com/v1beta", required: true },
  rerank: "none",
  inputModalities: ["text"],
  batchApi: () => "gemini",
  nativeDtypes: noDtypes,
  longInputs: () => long.silent,
  catalog: [
    {
      slug: "google-ai-studio",
      name: "Google AI Studio",
      adapter: id,
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
    }
  ],
  form: { credentialHint: storedHint }
})
