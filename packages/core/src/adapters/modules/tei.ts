/**
 * Text Embeddings Inference (Hugging Face): `POST /embed`, `/rerank` and `/tokenize` (the gateway
 * counts tokens through it), listed by `GET /info`, probed at `GET /health`. Wire format:
 * `apps/server/src/providers/Tei.ts`.
 *
 * @since 0.13.0
 */
import { SelfHostedFields } from "../Fields.ts"
import { define, long, none, noDtypes, storedHint } from "../ProviderModule.ts"

const id = "tei"

/**
 * @since 0.13.0
 */
export const tei = define({
  id,
  name: "Text Embeddings Inference",
  kind: "self-hosted",
  fields: SelfHostedFields.fields,
  needs: [],
  baseUrl: { default: "http://127.0.0.1:8080", required: true },
  rerank: "text",
  inputModalities: ["text"],
  batchApi: none,
  nativeDtypes: noDtypes,
  counter: "server",
  longInputs: () => long.both,
  catalog: [],
  form: {
    /**
     * What a self-hosted model server starts from: its replicas, and its models discovered (the
     * gateway asks the server what it serves). The adapter may be changed to another server's.
     */
    start: {
      label: "Own model server, models discovered (TEI, Infinity, Ollama, vLLM)",
      provider: {
        slug: "",
        name: "",
        adapter: id,
        base_urls: ["http://tei-0:80"],
        data_collection: "deny",
        discover: true,
        discover_interval_s: 60,
        default_pricing: { prompt: "0" }
      }
    },
    credentialHint: `Optional: the server's API key (TEI's --api-key), sent as a bearer. With "discover": true every model the server lists is served as <slug>/<server id>. ${storedHint}`
  }
})
