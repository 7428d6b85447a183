import type { RerankProvider } from "@switchyard/core/providers/RerankProvider"
import { Effect } from "effect"
import * as Jina from "./Jina.ts"
import * as OpenAiCompatible from "./OpenAiCompatible.ts"
import * as WireFormat from "./WireFormat.ts"

/** Where Infinity (`infinity_emb v2`) listens by default, with no `--url-prefix`. */
export const baseUrl = "http://127.0.0.1:7997"

/**
 * Infinity's OpenAI-compatible embeddings body: `model`, `input` (texts only: Infinity takes no
 * token ids), `dimensions` for Matryoshka models, `encoding_format`, `user`. Its answer carries
 * `usage.prompt_tokens`.
 */
const dialect: OpenAiCompatible.Dialect = {
  id: "infinity",
  baseUrl,
  path: "/embeddings",
  tokens: false,
  multimodal: "none",
  dimensionsField: "dimensions",
  base64: { field: "encoding_format", value: "base64" },
  inputType: undefined,
  user: true
}

/**
 * Infinity: `POST /embeddings` in OpenAI's shape, `POST /rerank` in Cohere's (`query`,
 * `documents`, `return_documents`; `results` of `{ index, relevance_score }` and
 * `usage.total_tokens` back, the shape Jina's rerank reads), text documents only.
 */
export const make = Effect.gen(function*() {
  const embeddings = yield* OpenAiCompatible.make({ name: "Infinity", path: () => dialect.path, keyHeaders: WireFormat.bearer, dialect })
  const { rerank } = yield* Jina.makeTextRerank("Infinity", "/rerank")
  return { ...embeddings, rerank: rerank satisfies RerankProvider["rerank"] }
})
