import type { EmbeddingProvider } from "@switchyard/core"
import { Effect, Schema } from "effect"
import * as InputType from "./InputType.ts"
import * as MediaData from "./MediaData.ts"
import * as TokenEstimate from "./TokenEstimate.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as WireFormat from "./WireFormat.ts"

const modelName = (upstreamModel: string): string => upstreamModel.replace(/^models\//u, "")

const pathOf = (upstreamModel: string): string =>
  `/models/${encodeURIComponent(modelName(upstreamModel))}:batchEmbedContents`

/** Google's task types by purpose, which Vertex AI's `task_type` shares. */
export const taskTypes: Record<InputType.Purpose, string> = {
  query: "RETRIEVAL_QUERY",
  document: "RETRIEVAL_DOCUMENT",
  similarity: "SEMANTIC_SIMILARITY",
  classification: "CLASSIFICATION",
  clustering: "CLUSTERING",
  question_answering: "QUESTION_ANSWERING",
  fact_verification: "FACT_VERIFICATION",
  code_query: "CODE_RETRIEVAL_QUERY",
  code_document: "RETRIEVAL_DOCUMENT"
}

const ModalityTokenCount = Schema.Struct({
  modality: Schema.optionalKey(Schema.String),
  tokenCount: Schema.optionalKey(Schema.Finite)
})

const BatchEmbedContentsResponse = Schema.Struct({
  embeddings: Schema.Array(Schema.Struct({ values: VectorEncoding.FloatVector })),
  usageMetadata: Schema.optionalKey(Schema.Struct({
    promptTokenCount: Schema.optionalKey(Schema.Finite),
    totalTokenCount: Schema.optionalKey(Schema.Finite),
    promptTokensDetails: Schema.optionalKey(Schema.Array(ModalityTokenCount))
  }))
})


const unsupported = WireFormat.unsupported

const inlineData = (inline: MediaData.Inline) => ({ inline_data: { mime_type: inline.mimeType, data: inline.data } })

const media = (index: number, kind: MediaData.Kind, payload: EmbeddingProvider.Media) => {
  const inline = MediaData.inline(kind, payload)
  return inline === undefined
    ? Effect.fail(unsupported(`input ${index}: the ${kind}'s media type is unknown; send a data: URL or a format`))
    : Effect.succeed(inlineData(inline))
}

const partOf = Effect.fnUntraced(function*(index: number, part: EmbeddingProvider.ContentPart) {
  switch (part.type) {
    case "text":
      return { text: part.text }
    case "image_url": {
      const inline = MediaData.parseDataUrl(part.image_url.url)
      if (inline === undefined) return yield* unsupported(`input ${index}: Gemini takes images inline only, as base64 data: URLs`)
      return inlineData(inline)
    }
    case "input_audio":
      return yield* media(index, "audio", part.input_audio)
    case "input_video":
      return yield* media(index, "video", part.input_video)
    case "input_file":
      return yield* media(index, "file", part.input_file)
  }
})

export const requestBody = Effect.fnUntraced(function*(request: EmbeddingProvider.UpstreamRequest) {
  const model = `models/${modelName(request.upstreamModel)}`
  const purpose = InputType.purposeOf(request.inputType)
  const common: Record<string, unknown> = {}
  if (purpose !== undefined) common.taskType = taskTypes[purpose]
  if (request.dimensions !== undefined) common.outputDimensionality = request.dimensions
  const contents: Array<ReadonlyArray<unknown>> = []
  switch (request.input._tag) {
    case "Texts":
      for (const text of request.input.texts) contents.push([{ text }])
      break
    case "Tokens":
      return yield* unsupported("Gemini does not accept token ids")
    case "Multimodal":
      for (const [index, parts] of request.input.items.entries()) {
        const converted: Array<unknown> = []
        for (const part of parts) converted.push(yield* partOf(index, part))
        contents.push(converted)
      }
      break
  }
  return { requests: contents.map((parts) => ({ model, content: { parts }, ...common })) }
})

const modalityKeys: Record<string, keyof EmbeddingProvider.ModalityTokens> = {
  TEXT: "text_tokens",
  IMAGE: "image_tokens",
  AUDIO: "audio_tokens",
  VIDEO: "video_tokens",
  DOCUMENT: "file_tokens"
}

const modalityTokens = (
  details: ReadonlyArray<typeof ModalityTokenCount.Type> | undefined
): EmbeddingProvider.ModalityTokens | undefined => {
  const out: WireFormat.ModalityCounts = {}
  for (const detail of details ?? []) {
    const key = detail.modality === undefined ? undefined : modalityKeys[detail.modality]
    if (key !== undefined && detail.tokenCount !== undefined && detail.tokenCount > 0) {
      out[key] = (out[key] ?? 0) + detail.tokenCount
    }
  }
  return Object.keys(out).length > 0 ? out : undefined
}

const wireFormat: WireFormat.WireFormat<typeof BatchEmbedContentsResponse.Type> = {
  name: "Gemini",
  keyHeaders: WireFormat.keyIn("x-goog-api-key"),
  response: BatchEmbedContentsResponse,
  request: (request) => Effect.map(requestBody(request), (body) => ({ path: pathOf(request.upstreamModel), body })),
  vectors: (response) => Effect.succeed(response.embeddings.map((entry, index) => ({ index, value: entry.values }))),
  usage: (response, request) => {
    const usage = response.usageMetadata
    const promptTokens = usage?.promptTokenCount ?? TokenEstimate.ofInput(request.input)
    return {
      promptTokens,
      totalTokens: usage?.totalTokenCount ?? promptTokens,
      modalityTokens: modalityTokens(usage?.promptTokensDetails),
      tokensEstimated: usage?.promptTokenCount === undefined
    }
  }
}

export const make = WireFormat.make(wireFormat)
