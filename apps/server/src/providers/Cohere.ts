import { EmbeddingProvider } from "@switchyard/core"
import { Effect, Layer, Redacted, Schema } from "effect"
import { HttpClient } from "effect/http"
import * as ErrorBody from "./ErrorBody.ts"
import * as InputType from "./InputType.ts"
import * as MediaData from "./MediaData.ts"
import * as TokenEstimate from "./TokenEstimate.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"
import * as VectorEncoding from "./VectorEncoding.ts"

export const baseUrl = "https://api.cohere.com/v2"
export const path = "/embed"

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

export const EmbedResponse = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  embeddings: Schema.Struct({
    float: Schema.optionalKey(Schema.NullOr(Schema.Array(VectorEncoding.FloatVector))),
    base64: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
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

const adapter = "cohere"

const unsupported = (detail: string) =>
  new EmbeddingProvider.UpstreamError({ adapter, reason: EmbeddingProvider.UnsupportedInput.make({ detail }) })

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
    // Cohere's base64 byte layout is undocumented, so floats are asked for and encoded here.
    embedding_types: ["float"]
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
  return body
})

const decodeResponse = UpstreamHttp.decode(adapter, EmbedResponse)

export const make = Effect.gen(function*() {
  const client = yield* HttpClient.HttpClient
  const embed = Effect.fn("Cohere.embed")(function*(
    connection: EmbeddingProvider.Connection,
    request: EmbeddingProvider.UpstreamRequest
  ) {
    const body = yield* requestBody(request)
    const json = yield* UpstreamHttp.post(client, {
      adapter,
      connection,
      path,
      headers: connection.apiKey === undefined ? {} : { authorization: `Bearer ${Redacted.value(connection.apiKey)}` },
      body,
      parseError: ErrorBody.firstOf(ErrorBody.message, ErrorBody.detail)
    })
    const response = yield* decodeResponse(json)
    const vectors: ReadonlyArray<ReadonlyArray<number> | string> | undefined = response.embeddings.float ??
      response.embeddings.base64 ?? undefined
    if (vectors === undefined) {
      return yield* new EmbeddingProvider.UpstreamError({
        adapter,
        reason: EmbeddingProvider.InvalidResponse.make({ detail: "the response holds no float embeddings" })
      })
    }
    const embeddings = yield* VectorEncoding.finish(adapter, request, vectors.map((value, index) => ({ index, value })))
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
      embeddings,
      promptTokens,
      totalTokens: promptTokens,
      ...(imageTokens !== undefined && imageTokens > 0 ? { modalityTokens } : {}),
      ...(response.id !== undefined ? { upstreamId: response.id } : {})
    } satisfies EmbeddingProvider.EmbeddingResult
  })
  return EmbeddingProvider.EmbeddingProvider.of({ embed })
})

export const layer = Layer.effect(EmbeddingProvider.EmbeddingProvider, make)
