/**
 * Ollama: `POST /api/embed`, listed by `GET /api/tags`, probed at `GET /api/version`. Wire format:
 * `apps/server/src/providers/Ollama.ts`.
 *
 * @since 0.13.0
 */
import { long } from "../ProviderModule.ts"
import { selfHostedServer } from "../SelfHostedServer.ts"

/**
 * @since 0.13.0
 */
export const ollama = selfHostedServer({
  id: "ollama",
  name: "Ollama",
  baseUrl: "http://127.0.0.1:11434",
  rerank: "none",
  inputModalities: ["text"],
  longInputs: () => long.end
})
