import { EmbeddingProvider } from "@switchyard/core"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import type * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect, Schema } from "effect"
import { HttpClient } from "effect/http"
import * as CloudIdentity from "./CloudIdentity.ts"
import * as InputType from "./InputType.ts"
import * as MediaData from "./MediaData.ts"
import * as TokenEstimate from "./TokenEstimate.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as WireFormat from "./WireFormat.ts"
import * as UpstreamSpan from "../instrumentation/UpstreamSpan.ts"

export type DialectId = Catalog.Dialect

export interface Dialect {
  /** The catalog's dialect, or the name of a self-hosted server that speaks its own (`vllm`). */
  readonly id: DialectId | "infinity" | "vllm"
  readonly baseUrl: string
  readonly path: string
  readonly tokens: boolean
  readonly multimodal: "none" | "openrouter" | "jina"
  readonly dimensionsField: string
  readonly base64: { readonly field: string; readonly value: string } | undefined
  readonly inputType: { readonly field: string; readonly map: (value: string) => string | undefined } | undefined
  readonly user: boolean
  /** The field that asks for a quantized type (`output_dtype`, Jina's `embedding_type`), where the API has one. */
  readonly dtypeField?: string
  /** The field that says whether a long input is cut at its end (Jina's `truncate`), where the API has one. */
  readonly truncateField?: string
}

const jinaTasks: Partial<Record<InputType.Purpose, string>> = {
  query: "retrieval.query",
  document: "retrieval.passage",
  similarity: "text-matching",
  classification: "classification",
  clustering: "separation",
  code_query: "code.query",
  code_document: "code.passage"
}

const jinaTaskOf = (inputType: string): string | undefined => {
  const purpose = InputType.purposeOf(inputType)
  return purpose === undefined ? undefined : jinaTasks[purpose]
}

/** The wire of the providers that take text alone, count no tokens and know no input type or user. */
const plainText = {
  path: "/embeddings",
  tokens: false,
  multimodal: "none",
  dimensionsField: "dimensions",
  base64: undefined,
  inputType: undefined,
  user: false
} as const satisfies Partial<Dialect>

export const dialects: Record<DialectId, Dialect> = {
  openai: {
    id: "openai",
    baseUrl: "https://api.openai.com/v1",
    path: "/embeddings",
    tokens: true,
    multimodal: "none",
    dimensionsField: "dimensions",
    base64: { field: "encoding_format", value: "base64" },
    inputType: undefined,
    user: true
  },
  mistral: {
    id: "mistral",
    baseUrl: "https://api.mistral.ai/v1",
    path: "/embeddings",
    tokens: false,
    multimodal: "none",
    dimensionsField: "output_dimension",
    base64: { field: "encoding_format", value: "base64" },
    inputType: undefined,
    user: false,
    dtypeField: "output_dtype"
  },
  jina: {
    id: "jina",
    baseUrl: "https://api.jina.ai/v1",
    path: "/embeddings",
    tokens: false,
    multimodal: "jina",
    dimensionsField: "dimensions",
    base64: { field: "embedding_type", value: "base64" },
    inputType: { field: "task", map: jinaTaskOf },
    user: false,
    dtypeField: "embedding_type",
    truncateField: "truncate"
  },
  together: { ...plainText, id: "together", baseUrl: "https://api.together.xyz/v1" },
  fireworks: { ...plainText, id: "fireworks", baseUrl: "https://api.fireworks.ai/inference/v1" },
  deepinfra: {
    ...plainText,
    id: "deepinfra",
    baseUrl: "https://api.deepinfra.com/v1/openai",
    base64: { field: "encoding_format", value: "base64" }
  },
  generic: {
    id: "generic",
    baseUrl: "https://api.openai.com/v1",
    path: "/embeddings",
    tokens: true,
    multimodal: "openrouter",
    dimensionsField: "dimensions",
    base64: { field: "encoding_format", value: "base64" },
    inputType: { field: "input_type", map: (value) => value },
    user: true
  }
}

const Usage = Schema.Struct({
  prompt_tokens: Schema.optionalKey(Schema.NullOr(Schema.Finite)),
  total_tokens: Schema.optionalKey(Schema.NullOr(Schema.Finite)),
  prompt_tokens_details: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    text_tokens: Schema.optionalKey(Schema.Finite),
    image_tokens: Schema.optionalKey(Schema.Finite),
    audio_tokens: Schema.optionalKey(Schema.Finite),
    video_tokens: Schema.optionalKey(Schema.Finite),
    file_tokens: Schema.optionalKey(Schema.Finite)
  })))
})

const EmbeddingsResponse = Schema.Struct({
  id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  data: Schema.Array(Schema.Struct({
    index: Schema.optionalKey(Schema.Int),
    embedding: Schema.Union([VectorEncoding.FloatVector, Schema.String])
  })),
  usage: Schema.optionalKey(Schema.NullOr(Usage))
})


const unsupported = WireFormat.unsupported

const textOnly = (parts: ReadonlyArray<EmbeddingProvider.ContentPart>): string | undefined => {
  const texts: Array<string> = []
  for (const part of parts) {
    if (part.type !== "text") return undefined
    texts.push(part.text)
  }
  return texts.join("\n")
}

const jinaItem = (parts: ReadonlyArray<EmbeddingProvider.ContentPart>): unknown => {
  const text = textOnly(parts)
  if (text !== undefined) return { text }
  const [part] = parts
  if (parts.length === 1 && part?.type === "image_url") {
    const inline = MediaData.parseDataUrl(part.image_url.url)
    return { image: inline === undefined ? part.image_url.url : inline.data }
  }
  return undefined
}

const inputOf = Effect.fnUntraced(function*(dialect: Dialect, input: EmbeddingProvider.EmbeddingInput) {
  switch (input._tag) {
    case "Texts":
      return input.texts as unknown
    case "Tokens":
      if (!dialect.tokens) return yield* unsupported(`${dialect.id} does not accept token ids`)
      return input.tokens
    case "Multimodal": {
      if (dialect.multimodal === "openrouter") return input.items.map((content) => ({ content }))
      const items: Array<unknown> = []
      for (const [index, parts] of input.items.entries()) {
        const item = dialect.multimodal === "jina" ? jinaItem(parts) : textOnly(parts)
        if (item === undefined) {
          return yield* unsupported(
            dialect.multimodal === "jina"
              ? `input ${index}: ${dialect.id} embeds one text or one image per input`
              : `input ${index}: ${dialect.id} embeds text only`
          )
        }
        items.push(item)
      }
      return items
    }
  }
})

export const requestBody = Effect.fnUntraced(function*(dialect: Dialect, request: EmbeddingProvider.UpstreamRequest) {
  const body: Record<string, unknown> = { model: request.upstreamModel, input: yield* inputOf(dialect, request.input) }
  if (request.dimensions !== undefined) body[dialect.dimensionsField] = request.dimensions
  if (request.encodingFormat === "base64" && dialect.base64 !== undefined) body[dialect.base64.field] = dialect.base64.value
  if (request.inputType !== undefined && dialect.inputType !== undefined) {
    const value = dialect.inputType.map(request.inputType)
    if (value !== undefined) body[dialect.inputType.field] = value
  }
  if (request.user !== undefined && dialect.user) body.user = request.user
  if (request.outputDtype !== undefined && dialect.dtypeField !== undefined) body[dialect.dtypeField] = request.outputDtype
  // A dialect with a truncation switch is told whether to cut the end: `none` (refuse) or `end`.
  if (request.truncate !== undefined && dialect.truncateField !== undefined) body[dialect.truncateField] = request.truncate === "end"
  return body
})

const modalityTokens = (details: typeof Usage.Type["prompt_tokens_details"]): EmbeddingProvider.ModalityTokens | undefined => {
  if (details === undefined || details === null) return undefined
  const out: WireFormat.ModalityCounts = {}
  for (const key of ["text_tokens", "image_tokens", "audio_tokens", "video_tokens", "file_tokens"] as const) {
    const value = details[key]
    if (value !== undefined && value > 0) out[key] = value
  }
  return Object.keys(out).length > 0 ? out : undefined
}

const decodeResponse = UpstreamHttp.decode(EmbeddingsResponse)

/**
 * The body with its vectors taken out (see {@link VectorEncoding.locate}): each `embedding` is the
 * position of its vector.
 */
const Skeleton = Schema.Struct({
  id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  data: Schema.Array(Schema.Struct({ index: Schema.optionalKey(Schema.Int), embedding: Schema.Int })),
  usage: Schema.optionalKey(Schema.NullOr(Usage))
})

const decodeSkeleton = Schema.decodeUnknownOption(Skeleton)

interface Answer {
  readonly id?: string | null | undefined
  readonly usage?: typeof Usage.Type | null | undefined
  readonly vectors: ReadonlyArray<VectorEncoding.RawVector<VectorEncoding.Vector>>
}

// The vectors stay in the upstream's bytes when every one of them was found where the schema
// expects it, each exactly once; any doubt and the body is read the ordinary way.
const forwardedAnswer = (body: Uint8Array): Answer | undefined => {
  const located = VectorEncoding.locate(body)
  if (located === undefined) return undefined
  const skeleton = decodeSkeleton(located.skeleton)
  if (skeleton._tag === "None" || skeleton.value.data.length !== located.vectors.length) return undefined
  const used = new Uint8Array(located.vectors.length)
  const vectors: Array<VectorEncoding.RawVector<VectorEncoding.Vector>> = []
  for (const [position, entry] of skeleton.value.data.entries()) {
    const slot = entry.embedding
    if (slot < 0 || slot >= used.length || used[slot] === 1) return undefined
    used[slot] = 1
    vectors.push({ index: entry.index ?? position, value: located.vectors[slot]! })
  }
  return { id: skeleton.value.id, usage: skeleton.value.usage, vectors }
}

const parsedAnswer = Effect.fnUntraced(function*(body: Uint8Array) {
  const response = yield* decodeResponse(yield* UpstreamHttp.parseJson(body))
  return {
    id: response.id,
    usage: response.usage,
    vectors: response.data.map((entry, position) => ({ index: entry.index ?? position, value: entry.embedding }))
  } satisfies Answer
})

const resultOf = Effect.fnUntraced(function*(request: EmbeddingProvider.UpstreamRequest, answer: Answer) {
  const embeddings = yield* VectorEncoding.finishForwarded(request, answer.vectors)
  const usage = answer.usage ?? undefined
  const counted = usage?.prompt_tokens ?? usage?.total_tokens ?? undefined
  const promptTokens = counted ?? TokenEstimate.ofInput(request.input)
  const modality = modalityTokens(usage?.prompt_tokens_details)
  return {
    embeddings,
    promptTokens,
    totalTokens: usage?.total_tokens ?? promptTokens,
    ...(modality !== undefined ? { modalityTokens: modality } : {}),
    ...(answer.id !== undefined && answer.id !== null ? { upstreamId: answer.id } : {}),
    ...(counted === undefined ? { tokensEstimated: true } : {})
  } satisfies ForwardedResult
})

/**
 * An embeddings answer already read as JSON (a provider batch's result line's body) as the live
 * call reads it: the same schema, encodings and token counts.
 */
export const resultOfBody = (request: EmbeddingProvider.UpstreamRequest, body: unknown) =>
  decodeResponse(body).pipe(
    Effect.flatMap((response) =>
      resultOf(request, {
        id: response.id,
        usage: response.usage,
        vectors: response.data.map((entry, position) => ({ index: entry.index ?? position, value: entry.embedding }))
      })
    )
  )

/**
 * What {@link make} provides: the port, plus `forward`, the same call whose vectors may stay in
 * the upstream's bytes ({@link VectorEncoding.ForwardedVector}) for the gateway to splice into
 * its response.
 */
export type ForwardingProvider = EmbeddingProvider.EmbeddingProvider["Service"] & {
  readonly forward: (
    connection: EmbeddingProvider.Connection,
    request: EmbeddingProvider.UpstreamRequest
  ) => Effect.Effect<ForwardedResult, UpstreamError.UpstreamError>
}

export interface ForwardedResult extends Omit<EmbeddingProvider.EmbeddingResult, "embeddings"> {
  readonly embeddings: ReadonlyArray<VectorEncoding.Forwarded>
}

/**
 * Where an OpenAI-shaped call goes and how its key is sent, when not as OpenAI's own API has them
 * (Azure OpenAI: a deployment's path, `api-version`, the `api-key` header).
 */
export interface Placement {
  readonly name: string
  readonly path: (connection: EmbeddingProvider.Connection, request: EmbeddingProvider.UpstreamRequest) => string
  readonly keyHeaders: WireFormat.KeyHeaders
  /**
   * The dialect this host always speaks (a self-hosted server's), in place of the connection's
   * `dialect`.
   */
  readonly dialect?: Dialect
}

const openAiPlacement: Placement = {
  name: "OpenAiCompatible",
  path: (connection) => dialects[connection.dialect ?? "generic"].path,
  keyHeaders: WireFormat.bearer
}

export const make = Effect.fnUntraced(function*(placement: Placement = openAiPlacement) {
  const client = yield* HttpClient.HttpClient
  const forward = Effect.fnUntraced(function*(
    connection: EmbeddingProvider.Connection,
    request: EmbeddingProvider.UpstreamRequest
  ) {
    const dialect = placement.dialect ?? dialects[connection.dialect ?? "generic"]
    const body = yield* requestBody(dialect, request)
    const bytes = yield* UpstreamHttp.postBytes(client, {
      connection,
      path: placement.path(connection, request),
      headers: yield* CloudIdentity.credentialHeaders(connection, placement.keyHeaders),
      body
    })
    return yield* resultOf(request, forwardedAnswer(bytes) ?? (yield* parsedAnswer(bytes)))
  }, UpstreamSpan.adapter(`${placement.name}.embed`))
  const embed = (connection: EmbeddingProvider.Connection, request: EmbeddingProvider.UpstreamRequest) =>
    forward(connection, request).pipe(Effect.map((result): EmbeddingProvider.EmbeddingResult => ({
      ...result,
      embeddings: result.embeddings.map((e) => ({
        index: e.index,
        embedding: e.embedding instanceof VectorEncoding.ForwardedVector ? e.embedding.value() : e.embedding
      }))
    })))
  const provider: ForwardingProvider = { ...EmbeddingProvider.EmbeddingProvider.of({ embed }), forward }
  return provider
})
