import { Effect, Schema } from "effect"
import * as TokenEstimate from "./TokenEstimate.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as WireFormat from "./WireFormat.ts"

// `POST /api/embed` answers the vectors in input order and the tokens it read.
const EmbedResponse = Schema.Struct({
  model: Schema.optionalKey(Schema.String),
  embeddings: Schema.Array(VectorEncoding.FloatVector),
  prompt_eval_count: Schema.optionalKey(Schema.NullOr(Schema.Finite))
})

/**
 * Ollama's embeddings (`POST /api/embed` with `model`, `input`, `truncate`, `dimensions`), tokens
 * from `prompt_eval_count` (estimated from the input when absent). Ollama takes text only.
 */
const wireFormat: WireFormat.WireFormat<typeof EmbedResponse.Type> = {
  name: "Ollama",
  keyHeaders: WireFormat.bearer,
  response: EmbedResponse,
  request: (request) => {
    switch (request.input._tag) {
      case "Texts":
        return Effect.succeed({
          path: "/api/embed",
          body: {
            model: request.upstreamModel,
            input: request.input.texts,
            // Ollama cuts a long input's end unless told not to.
            truncate: request.truncate === "end",
            ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {})
          }
        })
      case "Tokens":
        return WireFormat.unsupported("Ollama does not accept token ids")
      case "Multimodal":
        return WireFormat.unsupported("Ollama embeds text only")
    }
  },
  vectors: (response) => Effect.succeed(response.embeddings.map((value, index) => ({ index, value }))),
  // An answer without `prompt_eval_count` (a server that skipped evaluation) is estimated, never 0.
  usage: (response, request) => {
    const counted = response.prompt_eval_count ?? undefined
    const tokens = counted ?? TokenEstimate.ofInput(request.input)
    return { promptTokens: tokens, totalTokens: tokens, ...(counted === undefined ? { tokensEstimated: true } : {}) }
  }
}

export const make = WireFormat.make(wireFormat)
