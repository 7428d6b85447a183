import * as OpenAiServer from "./OpenAiServer.ts"

/** Where `vllm serve` listens by default; its routes sit under `/v1`. */
const baseUrl = "http://127.0.0.1:8000"

/**
 * vLLM: `POST /v1/embeddings` of a pooling model in OpenAI's shape (`model`, `input` as texts or
 * token ids, `dimensions` for Matryoshka models, `encoding_format`, `user`; `usage` back),
 * `POST /v1/rerank` in Jina's (and Cohere's) shape, text documents only.
 */
export const make = OpenAiServer.make({
  name: "Vllm",
  id: "vllm",
  baseUrl,
  embeddingsPath: "/v1/embeddings",
  rerankPath: "/v1/rerank",
  tokens: true
})
