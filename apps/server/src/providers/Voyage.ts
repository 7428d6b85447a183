import type { EmbeddingProvider } from "@switchyard/core"
import { Effect, Schema } from "effect"
import * as InputType from "./InputType.ts"
import * as MediaData from "./MediaData.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as RerankWire from "./RerankWire.ts"
import * as WireFormat from "./WireFormat.ts"

const textPath = "/embeddings"
const multimodalPath = "/multimodalembeddings"

const inputTypes: Partial<Record<InputType.Purpose, "query" | "document">> = {
  query: "query",
  document: "document",
  code_query: "query",
  code_document: "document"
}

const EmbeddingsResponse = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    index: Schema.optionalKey(Schema.Int),
    embedding: Schema.Union([VectorEncoding.FloatVector, Schema.String])
  })),
  usage: Schema.Struct({
    total_tokens: Schema.Finite,
    text_tokens: Schema.optionalKey(Schema.Finite),
    image_pixels: Schema.optionalKey(Schema.Finite),
    video_pixels: Schema.optionalKey(Schema.Finite)
  })
})


const unsupported = WireFormat.unsupported

const segmentOf = Effect.fnUntraced(function*(index: number, part: EmbeddingProvider.ContentPart) {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text }
    case "image_url": {
      if (MediaData.isHttpUrl(part.image_url.url)) return { type: "image_url", image_url: part.image_url.url }
      if (MediaData.parseDataUrl(part.image_url.url) === undefined) {
        return yield* unsupported(`input ${index}: an image must be an http(s) URL or a base64 data: URL`)
      }
      return { type: "image_base64", image_base64: part.image_url.url }
    }
    case "input_video": {
      if (MediaData.isHttpUrl(part.input_video.data)) return { type: "video_url", video_url: part.input_video.data }
      const inline = MediaData.inline("video", part.input_video)
      if (inline === undefined) {
        return yield* unsupported(`input ${index}: the video's media type is unknown; send a data: URL or a format`)
      }
      return { type: "video_base64", video_base64: MediaData.toDataUrl(inline) }
    }
    case "input_audio":
    case "input_file":
      return yield* unsupported(`input ${index}: Voyage embeds text, images and video, not ${MediaData.partKind(part)}`)
  }
})

export const requestOf = Effect.fnUntraced(function*(request: EmbeddingProvider.UpstreamRequest) {
  const purpose = InputType.purposeOf(request.inputType)
  const inputType = purpose === undefined ? undefined : inputTypes[purpose]
  const common: Record<string, unknown> = { model: request.upstreamModel }
  if (inputType !== undefined) common.input_type = inputType
  if (request.dimensions !== undefined) common.output_dimension = request.dimensions
  if (request.outputDtype !== undefined) common.output_dtype = request.outputDtype
  // Voyage cuts a long input's end unless told not to (`truncation`, on by default).
  if (request.truncate !== undefined) common.truncation = request.truncate === "end"
  switch (request.input._tag) {
    case "Texts":
      return {
        path: textPath,
        body: {
          ...common,
          input: request.input.texts,
          ...(request.encodingFormat === "base64" ? { encoding_format: "base64" } : {})
        }
      }
    case "Tokens":
      return yield* unsupported("Voyage does not accept token ids")
    case "Multimodal": {
      const inputs: Array<unknown> = []
      for (const [index, parts] of request.input.items.entries()) {
        const content: Array<unknown> = []
        for (const part of parts) content.push(yield* segmentOf(index, part))
        inputs.push({ content })
      }
      return {
        path: multimodalPath,
        body: {
          ...common,
          inputs,
          ...(request.encodingFormat === "base64" ? { output_encoding: "base64" } : {})
        }
      }
    }
  }
})

type Usage = typeof EmbeddingsResponse.Type["usage"]

// Voyage bills images and video as pixels folded into total_tokens; the remainder after text is theirs.
const modalityTokens = (usage: Usage): EmbeddingProvider.ModalityTokens | undefined => {
  if (usage.text_tokens === undefined) return undefined
  const media = Math.max(0, usage.total_tokens - usage.text_tokens)
  const image = usage.image_pixels ?? 0
  const video = usage.video_pixels ?? 0
  if (media === 0 || image + video === 0) return undefined
  const imageTokens = Math.round((media * image) / (image + video))
  const out: WireFormat.ModalityCounts = {}
  if (usage.text_tokens > 0) out.text_tokens = usage.text_tokens
  if (imageTokens > 0) out.image_tokens = imageTokens
  if (media - imageTokens > 0) out.video_tokens = media - imageTokens
  return out
}

/** Voyage's text and multimodal embeddings: the live calls', and a batch's result lines' bodies. */
export const wireFormat: WireFormat.WireFormat<typeof EmbeddingsResponse.Type> = {
  name: "Voyage",
  keyHeaders: WireFormat.bearer,
  response: EmbeddingsResponse,
  request: requestOf,
  vectors: (response) =>
    Effect.succeed(response.data.map((entry, position) => ({ index: entry.index ?? position, value: entry.embedding }))),
  usage: (response) => ({
    promptTokens: response.usage.total_tokens,
    totalTokens: response.usage.total_tokens,
    modalityTokens: modalityTokens(response.usage)
  })
}

export const make = WireFormat.make(wireFormat)

const RerankResponse = Schema.Struct({
  data: Schema.Array(RerankWire.WireScore),
  usage: Schema.optionalKey(Schema.NullOr(Schema.Struct({ total_tokens: Schema.optionalKey(Schema.NullOr(Schema.Finite)) })))
})

/**
 * Voyage's rerank (`POST /v1/rerank`), billed in tokens. Voyage truncates long documents itself
 * (`truncation`, on by default) and takes no per-document token limit.
 */
const rerankFormat: RerankWire.RerankFormat<typeof RerankResponse.Type> = {
  name: "Voyage",
  keyHeaders: WireFormat.bearer,
  path: "/rerank",
  response: RerankResponse,
  body: (request, documents) => ({ model: request.upstreamModel, query: request.query, documents }),
  scores: (response) => response.data,
  billed: (response) => ({ totalTokens: response.usage?.total_tokens ?? undefined })
}

export const makeRerank = RerankWire.make(rerankFormat)
