import * as OpenAiServer from "./OpenAiServer.ts"

/** Where Infinity (`infinity_emb v2`) listens by default, with no `--url-prefix`. */
const baseUrl = "http://127.0.0.1:7997"

/**
 * Infinity: `POST /embeddings` in OpenAI's shape (`model`, `input` as texts only: Infinity takes
 * no token ids, `dimensions` for Matryoshka models, `encoding_format`, `user`; `usage.prompt_tokens`
 * back), `POST /rerank` in Cohere's (`query`, `documents`, `return_documents`; `results` of
 * `{ index, relevance_score }` and `usage.total_tokens` back, the shape Jina's rerank reads).
 */
export const make = OpenAiServer.make({
  name: "Infinity",
  id: "infinity",
  baseUrl,
  embeddingsPath: "/embeddings",
  rerankPath: "/rerank",
  tokens: false
})
