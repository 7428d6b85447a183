import { Schema } from "effect"
import * as RerankWire from "./RerankWire.ts"
import * as WireFormat from "./WireFormat.ts"

const RerankResponse = Schema.Struct({
  id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  results: Schema.Array(RerankWire.WireScore),
  usage: Schema.optionalKey(Schema.NullOr(Schema.Struct({ total_tokens: Schema.optionalKey(Schema.NullOr(Schema.Finite)) })))
})

/**
 * Jina's rerank shape (`POST /rerank` with `model`, `query`, `documents`, `top_n`,
 * `return_documents`; `results` and `usage.total_tokens` back), which vLLM, Text Embeddings
 * Inference and other OpenAI-compatible hosts share. Documents are not asked back: the gateway has
 * them. A call with an image sends every document as an object, `{ "text" }`, `{ "image" }` or
 * both, as Jina's multimodal reranker takes them.
 */
const rerankFormat: RerankWire.RerankFormat<typeof RerankResponse.Type> = {
  name: "Jina",
  keyHeaders: WireFormat.bearer,
  path: "/rerank",
  response: RerankResponse,
  imageDocument: (document) => ({
    ...(document.text !== undefined ? { text: document.text } : {}),
    ...(document.image !== undefined ? { image: document.image } : {})
  }),
  body: (request, documents) => ({
    model: request.upstreamModel,
    query: request.query,
    documents,
    return_documents: false
  }),
  scores: (response) => response.results,
  billed: (response) => ({ totalTokens: response.usage?.total_tokens ?? undefined, upstreamId: response.id ?? undefined })
}

export const makeRerank = RerankWire.make(rerankFormat)

/**
 * Jina's rerank shape as a self-hosted server speaks it (Infinity, vLLM): at the server's own
 * path, text documents only.
 */
export const makeTextRerank = (name: string, path: string) => {
  const { imageDocument: _images, ...textOnly } = rerankFormat
  return RerankWire.make({ ...textOnly, name, path })
}
