/**
 * The in-process model: needs no network and no key, so that a fresh install answers
 * `switchyard/local-embed` and `switchyard/local-rerank` with no credentials at all. Wire format:
 * `apps/server/src/providers/Local.ts`.
 *
 * @since 0.13.0
 */
import { define, long, none, noDtypes, storedHint } from "../ProviderModule.ts"

const id = "local"

/**
 * The in-process model every install can serve without credentials.
 *
 * @since 0.1.0
 */
export const localModel = "switchyard/local-embed"

/** The in-process rerank model every install can serve without credentials. */
const localRerankModel = "switchyard/local-rerank"

/**
 * The width of {@link localModel}'s vectors unless `dimensions` asks otherwise.
 *
 * @since 0.1.0
 */
export const localDimensions = 256

/**
 * @since 0.13.0
 */
export const local = define({
  id,
  name: "Switchyard local",
  kind: "in-process",
  fields: {},
  needs: [],
  baseUrl: { default: "local:", required: false },
  rerank: "text",
  inputModalities: ["text", "tokens", "image", "audio", "video", "file"],
  batchApi: none,
  nativeDtypes: noDtypes,
  counter: "local",
  longInputs: () => long.none,
  catalog: [
    {
      slug: "local",
      name: "Switchyard local",
      adapter: id,
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
    }
  ],
  form: { credentialHint: storedHint }
})
