import type { EmbeddingProvider } from "@switchyard/core"
import { Effect, Schema } from "effect"
import * as InputType from "./InputType.ts"
import * as MediaData from "./MediaData.ts"
import * as TokenEstimate from "./TokenEstimate.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as RerankWire from "./RerankWire.ts"
import * as WireFormat from "./WireFormat.ts"

const path = "/embed"

// Cohere requires an input_type; a document is the neutral choice when the client names none.
const inputTypes: Partial<Record<InputType.Purpose, string>> = {
  query: "search_query",
  document: "search_document",
  classification: "classification",
  clustering: "clustering",
  code_query: "search_query",
  code_document: "search_document"
}

export const inputTypeOf = (inputType: string | undefined): string =>
  inputTypes[InputType.purposeOf(inputType) ?? "document"] ?? "search_document"

/** Cohere's `truncate` (and Bedrock's Cohere Embed's) for the gateway's long-input flag. */
export const truncateOf = (truncate: EmbeddingProvider.UpstreamRequest["truncate"]): string | undefined =>
  truncate === "none" ? "NONE" : truncate === "start" ? "START" : truncate === "end" ? "END" : undefined

/** The one type an embed call asks for: the quantized type the gateway asked natively, else floats. */
export const embeddingTypeOf = (request: EmbeddingProvider.UpstreamRequest): string => request.outputDtype ?? "float"

const EmbedResponse = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  embeddings: Schema.Struct({
    float: Schema.optionalKey(Schema.NullOr(Schema.Array(VectorEncoding.FloatVector))),
    base64: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
    int8: Schema.optionalKey(Schema.NullOr(Schema.Array(VectorEncoding.FloatVector))),
    uint8: Schema.optionalKey(Schema.NullOr(Schema.Array(VectorEncoding.FloatVector))),
    binary: Schema.optionalKey(Schema.NullOr(Schema.Array(VectorEncoding.FloatVector))),
    ubinary: Schema.optionalKey(Schema.NullOr(Schema.Array(VectorEncoding.FloatVector)))
  }),
  meta: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    billed_units: Schema.optionalKey(Schema.NullOr(Schema.Struct({
      input_tokens: Schema.optionalKey(Schema.NullOr(Schema.Finite)),
      image_tokens: Schema.optionalKey(Schema.NullOr(Schema.Finite)),
      images: Schema.optionalKey(Schema.NullOr(Schema.Finite))
    }))),
    tokens: Schema.optionalKey(Schema.NullOr(Schema.Struct({
      input_tokens: Schema.optionalKey(Schema.NullOr(Schema.Finite))
    })))
  })))
})


const unsupported = WireFormat.unsupported

const contentOf = Effect.fnUntraced(function*(index: number, parts: ReadonlyArray<EmbeddingProvider.ContentPart>) {
  const content: Array<unknown> = []
  for (const part of parts) {
    if (part.type === "text") {
      content.push({ type: "text", text: part.text })
    } else if (part.type === "image_url") {
      if (MediaData.parseDataUrl(part.image_url.url) === undefined) {
        return yield* unsupported(`input ${index}: Cohere takes images only as base64 data: URLs`)
      }
      content.push({ type: "image_url", image_url: { url: part.image_url.url } })
    } else {
      return yield* unsupported(`input ${index}: Cohere embeds text and images, not ${MediaData.partKind(part)}`)
    }
  }
  return { content }
})

export const requestBody = Effect.fnUntraced(function*(request: EmbeddingProvider.UpstreamRequest) {
  const body: Record<string, unknown> = {
    model: request.upstreamModel,
    input_type: inputTypeOf(request.inputType),
    // Cohere's base64 byte layout is undocumented, so floats (or the quantized type asked) are
    // asked for and encoded here.
    embedding_types: [embeddingTypeOf(request)]
  }
  switch (request.input._tag) {
    case "Texts":
      body.texts = request.input.texts
      break
    case "Tokens":
      return yield* unsupported("Cohere does not accept token ids")
    case "Multimodal": {
      const inputs: Array<unknown> = []
      for (const [index, parts] of request.input.items.entries()) inputs.push(yield* contentOf(index, parts))
      body.inputs = inputs
      break
    }
  }
  if (request.dimensions !== undefined) body.output_dimension = request.dimensions
  const truncate = truncateOf(request.truncate)
  if (truncate !== undefined) body.truncate = truncate
  return body
})

const usage = (response: typeof EmbedResponse.Type, request: EmbeddingProvider.UpstreamRequest): WireFormat.Usage => {
  const billed = response.meta?.billed_units ?? undefined
  const textTokens = billed?.input_tokens ?? response.meta?.tokens?.input_tokens ?? undefined
  const imageTokens = billed?.image_tokens ?? undefined
  const promptTokens = textTokens === undefined && imageTokens === undefined
    ? TokenEstimate.ofInput(request.input)
    : (textTokens ?? 0) + (imageTokens ?? 0)
  const modalityTokens: { text_tokens?: number; image_tokens?: number } = {}
  if (textTokens !== undefined && textTokens > 0) modalityTokens.text_tokens = textTokens
  if (imageTokens !== undefined && imageTokens > 0) modalityTokens.image_tokens = imageTokens
  return {
    promptTokens,
    totalTokens: promptTokens,
    modalityTokens: imageTokens !== undefined && imageTokens > 0 ? modalityTokens : undefined,
    upstreamId: response.id,
    tokensEstimated: textTokens === undefined && imageTokens === undefined
  }
}

const wireFormat: WireFormat.WireFormat<typeof EmbedResponse.Type> = {
  name: "Cohere",
  keyHeaders: WireFormat.bearer,
  response: EmbedResponse,
  request: (request) => Effect.map(requestBody(request), (body) => ({ path, body })),
  vectors: (response, request) => {
    const type = embeddingTypeOf(request)
    const vectors: ReadonlyArray<ReadonlyArray<number> | string> | undefined = type === "float"
      ? response.embeddings.float ?? response.embeddings.base64 ?? undefined
      : response.embeddings[type as "int8" | "uint8" | "binary" | "ubinary"] ?? undefined
    return vectors === undefined
      ? Effect.fail(WireFormat.invalidResponse(`the response holds no ${type} embeddings`))
      : Effect.succeed(vectors.map((value, index) => ({ index, value })))
  },
  usage
}

export const make = WireFormat.make(wireFormat)

const RerankResponse = Schema.Struct({
  id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  results: Schema.Array(RerankWire.WireScore),
  meta: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    billed_units: Schema.optionalKey(Schema.NullOr(Schema.Struct({
      search_units: Schema.optionalKey(Schema.NullOr(Schema.Finite))
    })))
  })))
})

/**
 * Cohere's v2 rerank (`POST /v2/rerank`), billed in search units.
 */
const rerankFormat: RerankWire.RerankFormat<typeof RerankResponse.Type> = {
  name: "Cohere",
  keyHeaders: WireFormat.bearer,
  path: "/rerank",
  response: RerankResponse,
  body: (request, documents) => ({
    model: request.upstreamModel,
    query: request.query,
    documents,
    ...(request.maxTokensPerDoc !== undefined ? { max_tokens_per_doc: request.maxTokensPerDoc } : {})
  }),
  scores: (response) => response.results,
  billed: (response) => ({
    searchUnits: response.meta?.billed_units?.search_units ?? undefined,
    upstreamId: response.id ?? undefined
  })
}

export const makeRerank = RerankWire.make(rerankFormat)
