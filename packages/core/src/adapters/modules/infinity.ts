/**
 * Infinity: OpenAI-compatible `POST /embeddings` and Jina-shaped `/rerank`, listed by
 * `GET /models`, probed at `GET /health`. Wire format: `apps/server/src/providers/Infinity.ts` over
 * `OpenAiServer.ts`.
 *
 * @since 0.13.0
 */
import { long } from "../ProviderModule.ts"
import { selfHostedServer } from "../SelfHostedServer.ts"

/**
 * @since 0.13.0
 */
export const infinity = selfHostedServer({
  id: "infinity",
  name: "Infinity",
  baseUrl: "http://127.0.0.1:7997",
  rerank: "text",
  inputModalities: ["text"],
  longInputs: () => long.silent
})
