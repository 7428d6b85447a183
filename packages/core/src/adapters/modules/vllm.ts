/**
 * vLLM: OpenAI-compatible `POST /v1/embeddings` (token ids too) and `/v1/rerank`, listed by
 * `GET /v1/models`, probed at `GET /health`. Wire format: `apps/server/src/providers/Vllm.ts` over
 * `OpenAiServer.ts`.
 *
 * @since 0.13.0
 */
import { long } from "../ProviderModule.ts"
import { selfHostedServer } from "../SelfHostedServer.ts"

/**
 * @since 0.13.0
 */
export const vllm = selfHostedServer({
  id: "vllm",
  name: "vLLM",
  baseUrl: "http://127.0.0.1:8000",
  rerank: "text",
  inputModalities: ["text", "tokens"],
  longInputs: () => long.none
})
