/**
 * Text Embeddings Inference (Hugging Face): `POST /embed`, `/rerank` and `/tokenize` (the gateway
 * counts tokens through it), listed by `GET /info`, probed at `GET /health`. Wire format:
 * `apps/server/src/providers/Tei.ts`.
 *
 * @since 0.13.0
 */
import { long } from "../ProviderModule.ts"
import { selfHostedServer } from "../SelfHostedServer.ts"

const id = "tei"

/**
 * @since 0.13.0
 */
export const tei = selfHostedServer({
  id,
  name: "Text Embeddings Inference",
  baseUrl: "http://127.0.0.1:8080",
  rerank: "text",
  inputModalities: ["text"],
  counter: "server",
  longInputs: () => long.both,
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
  }
})
