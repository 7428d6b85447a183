import type { RerankProvider } from "@switchyard/core/providers/RerankProvider"
import { Effect } from "effect"
import * as Jina from "./Jina.ts"
import * as OpenAiCompatible from "./OpenAiCompatible.ts"
import * as WireFormat from "./WireFormat.ts"

/**
 * A self-hosted model server that speaks OpenAI's embeddings wire and Jina's (Cohere's) rerank
 * wire at paths of its own (Infinity, vLLM): OpenAI's body and answer (`dimensions`,
 * `encoding_format`, `user`), a bearer key when one is set, text documents only for rerank.
 */
export const make = (server: {
  readonly name: string
  readonly id: "infinity" | "vllm"
  readonly baseUrl: string
  readonly embeddingsPath: string
  readonly rerankPath: string
  /** Whether the server takes token ids as input. */
  readonly tokens: boolean
}) =>
  Effect.gen(function*() {
    const dialect: OpenAiCompatible.Dialect = {
      ...OpenAiCompatible.dialects.openai,
      id: server.id,
      baseUrl: server.baseUrl,
      path: server.embeddingsPath,
      tokens: server.tokens
    }
    const embeddings = yield* OpenAiCompatible.make({ name: server.name, path: () => dialect.path, keyHeaders: WireFormat.bearer, dialect })
    const { rerank } = yield* Jina.makeTextRerank(server.name, server.rerankPath)
    return { ...embeddings, rerank: rerank satisfies RerankProvider["rerank"] }
  })
