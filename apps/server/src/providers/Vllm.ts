import type { RerankProvider } from "@switchyard/core/providers/RerankProvider"
import { Effect } from "effect"
import * as Jina from "./Jina.ts"
import * as OpenAiCompatible from "./OpenAiCompatible.ts"
import * as WireFormat from "./WireFormat.ts"

/** Where `vllm serve` listens by default; its routes sit under `/v1`. */
export const baseUrl = "http://127.0.0.1:8000"

/**
 * vLLM's OpenAI-compatible embeddings body (`/v1/embeddings` of a pooling model): `model`,
 * `input` as texts or token ids, `dimensions` for Matryoshka models, `encoding_format`, `user`.
 * Its answer carries `usage`.
 */
const dialect: OpenAiCompatible.Dialect = {
  id: "vllm",
  baseUrl,
  path: "/v1/embeddings",
  tokens: true,
  multimodal: "none",
  dimensionsField: "dimensions",
  base64: { field: "encoding_format", value: "base64" },
  inputType: undefined,
  user: true
}

/**
 * vLLM: `POST /v1/embeddings` in OpenAI's shape, `POST /v1/rerank` in Jina's (and Cohere's)
 * shape, text documents only.
 */
export const make = Effect.gen(function*() {
  const embeddings = yield* OpenAiCompatible.make({ name: "Vllm", path: () => dialect.path, keyHeaders: WireFormat.bearer, dialect })
  const { rerank } = yield* Jina.makeTextRerank("Vllm", "/v1/rerank")
  return { ...embeddings, rerank: rerank satisfies RerankProvider["rerank"] }
})
