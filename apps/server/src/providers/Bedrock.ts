import type { Sha256 } from "@aws-crypto/sha256-js"
import type { SignatureV4 } from "@smithy/signature-v4"
import type { EmbeddingProvider } from "@switchyard/core"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import type * as RerankProvider from "@switchyard/core/providers/RerankProvider"
import * as BedrockAnswer from "@switchyard/core/upstream/BedrockAnswer"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Effect, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import * as AwsCredentials from "./AwsCredentials.ts"
import * as Cohere from "./Cohere.ts"
import * as RerankWire from "./RerankWire.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as Span from "../instrumentation/Span.ts"

/** Bedrock's runtime endpoint in a region, when the provider names no `base_url` (its module's). */
export const baseUrlOf = Catalog.bedrockBaseUrl

/** Titan Text Embeddings takes one text a call; a request's texts go out this many at a time. */
const titanConcurrency = 8

/** Cohere Embed on Bedrock takes at most this many texts a call. */
const cohereTextsPerCall = 96

const tokenCountHeader = "x-amzn-bedrock-input-token-count"

const TitanResponse = Schema.Struct({
  embedding: VectorEncoding.FloatVector,
  inputTextTokenCount: Schema.Finite
})

const Vectors = Schema.optionalKey(Schema.Array(VectorEncoding.FloatVector))

const CohereResponse = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  embeddings: Schema.Union([
    Schema.Array(VectorEncoding.FloatVector),
    Schema.Struct({ float: Vectors, int8: Vectors, uint8: Vectors, binary: Vectors, ubinary: Vectors })
  ])
})

const RerankResponse = Schema.Struct({ results: Schema.Array(RerankWire.WireScore) })

const decodeTitan = UpstreamHttp.decode(TitanResponse)
const decodeCohere = UpstreamHttp.decode(CohereResponse)
const decodeRerank = UpstreamHttp.decode(RerankResponse)

/**
 * The AWS SDK's signer and credential chain, loaded on the first Bedrock call rather than at start:
 * together about 5.5 MB of heap and 400 ms of loading that a gateway without Bedrock never needs.
 */
let signing: Promise<{ readonly SignatureV4: typeof SignatureV4; readonly Sha256: typeof Sha256 }> | undefined
const loadSigning = () =>
  signing ??= Promise.all([import("@smithy/signature-v4"), import("@aws-crypto/sha256-js")]).then(([signer, hash]) => ({
    SignatureV4: signer.SignatureV4,
    Sha256: hash.Sha256
  }))

// The default chain (environment, profile, web identity, container, instance), made on first use.
const defaultChain = (): AwsCredentials.CredentialSource => {
  let chain: Promise<AwsCredentials.CredentialSource> | undefined
  return (options) => {
    chain ??= import("@aws-sdk/credential-providers").then(({ fromNodeProviderChain }) => fromNodeProviderChain())
    return chain.then((source) => source(options))
  }
}

/** The model family an upstream id names (a bare id, a cross-region profile `us.…` or an ARN). */
const familyOf = (upstreamModel: string): "titan" | "cohere" | undefined =>
  upstreamModel.includes("amazon.titan-embed") ? "titan" : upstreamModel.includes("cohere.embed") ? "cohere" : undefined

/**
 * One signed `InvokeModel` call: `POST /model/{model}/invoke`. With an API key on the connection
 * (a Bedrock API key) it goes as a bearer token; otherwise the call is signed with SigV4 for
 * service `bedrock` in the provider's region over the credential chain's current credential.
 */
const makeInvoke = (client: HttpClient.HttpClient, credential: Effect.Effect<AwsCredentials.AwsCredential, UpstreamError.UpstreamError>) =>
  Effect.fnUntraced(function*(connection: EmbeddingProvider.Connection, upstreamModel: string, body: unknown) {
    const region = connection.region
    if (region === undefined) return yield* UpstreamError.unsupportedInput("the bedrock provider names no region")
    const url = new URL(UpstreamHttp.joinUrl(connection.baseUrl, `/model/${encodeURIComponent(upstreamModel)}/invoke`))
    const text = JSON.stringify(body)
    const base = { "content-type": "application/json", accept: "application/json" }
    let headers: Record<string, string>
    if (connection.apiKey !== undefined) {
      headers = { ...base, ...UpstreamHttp.bearerOf(connection) }
    } else {
      const credentials = yield* credential
      const signingDate = new Date(yield* Clock.currentTimeMillis)
      const signed = yield* Effect.promise(() =>
        loadSigning().then(({ SignatureV4, Sha256 }) => new SignatureV4({ service: "bedrock", region, credentials, sha256: Sha256 }).sign({
          method: "POST",
          protocol: url.protocol,
          hostname: url.hostname,
          ...(url.port === "" ? {} : { port: Number(url.port) }),
          path: url.pathname,
          query: {},
          headers: { ...base, host: url.host },
          body: text
        }, { signingDate }))
      )
      const { host: _host, ...rest } = signed.headers
      headers = rest
    }
    const request = HttpClientRequest.post(url.href).pipe(
      HttpClientRequest.setHeaders({ ...headers, ...connection.headers }),
      HttpClientRequest.bodyText(text, "application/json")
    )
    const response = yield* UpstreamHttp.send(client, request, BedrockAnswer.fromResponse)
    const json = yield* UpstreamHttp.parseJson(yield* UpstreamHttp.bytesOf(response))
    const counted = Number(response.headers[tokenCountHeader])
    return { json, inputTokens: Number.isSafeInteger(counted) && counted >= 0 ? counted : undefined }
  })

type Invoke = ReturnType<typeof makeInvoke>

const textsOf = (request: EmbeddingProvider.UpstreamRequest) =>
  request.input._tag === "Texts"
    ? Effect.succeed(request.input.texts)
    : Effect.fail(UpstreamError.unsupportedInput(
      `Bedrock embeds text here, not ${request.input._tag === "Tokens" ? "token ids" : "multimodal items"}`
    ))

// Titan Text Embeddings v2: one `inputText` a call, `inputTextTokenCount` back.
const embedTitan = Effect.fnUntraced(function*(
  invoke: Invoke,
  connection: EmbeddingProvider.Connection,
  request: EmbeddingProvider.UpstreamRequest,
  texts: ReadonlyArray<string>
) {
  const answers = yield* Effect.forEach(texts, (inputText) =>
    invoke(connection, request.upstreamModel, {
      inputText,
      ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
      normalize: true,
      embeddingTypes: ["float"]
    }).pipe(Effect.flatMap(({ json }) => decodeTitan(json))), { concurrency: titanConcurrency })
  const tokens = answers.reduce((sum, answer) => sum + answer.inputTextTokenCount, 0)
  return { vectors: answers.map((answer, index) => ({ index, value: answer.embedding })), tokens, upstreamId: undefined }
})

// Cohere Embed on Bedrock: up to 96 `texts` a call; tokens from the token-count header.
const embedCohere = Effect.fnUntraced(function*(
  invoke: Invoke,
  connection: EmbeddingProvider.Connection,
  request: EmbeddingProvider.UpstreamRequest,
  texts: ReadonlyArray<string>
) {
  const chunks: Array<ReadonlyArray<string>> = []
  for (let start = 0; start < texts.length; start += cohereTextsPerCall) chunks.push(texts.slice(start, start + cohereTextsPerCall))
  const answers = yield* Effect.forEach(chunks, (chunk) =>
    invoke(connection, request.upstreamModel, {
      texts: chunk,
      input_type: Cohere.inputTypeOf(request.inputType),
      embedding_types: [Cohere.embeddingTypeOf(request)],
      ...(Cohere.truncateOf(request.truncate) !== undefined ? { truncate: Cohere.truncateOf(request.truncate) } : {}),
      ...(request.dimensions !== undefined ? { output_dimension: request.dimensions } : {})
    }).pipe(Effect.flatMap(({ json, inputTokens }) =>
      decodeCohere(json).pipe(Effect.map((response) => ({ response, inputTokens })))
    )), { concurrency: 2 })
  const vectors: Array<VectorEncoding.RawVector> = []
  let tokens = 0
  const type = Cohere.embeddingTypeOf(request) as "float" | "int8" | "uint8" | "binary" | "ubinary"
  for (const [chunk, { response, inputTokens }] of answers.entries()) {
    const embeddings = response.embeddings
    const values = Array.isArray(embeddings) ? embeddings : (embeddings as Partial<Record<typeof type, ReadonlyArray<ReadonlyArray<number>>>>)[type]
    if (values === undefined) return yield* UpstreamError.invalidResponse(`the response holds no ${type} embeddings`)
    for (const [i, value] of values.entries()) vectors.push({ index: chunk * cohereTextsPerCall + i, value })
    tokens += inputTokens ?? 0
  }
  return { vectors, tokens, upstreamId: answers.length === 1 ? answers[0]!.response.id : undefined }
})

/**
 * The `bedrock` adapter: embeddings through Titan Text Embeddings v2 and Cohere Embed, rerank
 * through Cohere Rerank 3.5 and Amazon Rerank, every call an `InvokeModel`. The AWS credential
 * is held by the adapter and refreshed before it expires, never fetched per request.
 */
export const make = (source: AwsCredentials.CredentialSource = defaultChain()) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const invoke = makeInvoke(client, AwsCredentials.make(source))
    const embed = Effect.fnUntraced(function*(connection: EmbeddingProvider.Connection, request: EmbeddingProvider.UpstreamRequest) {
      const texts = yield* textsOf(request)
      const family = familyOf(request.upstreamModel)
      if (family === undefined) {
        return yield* UpstreamError.unsupportedInput(`Bedrock model ${request.upstreamModel} is neither Titan Text Embeddings nor Cohere Embed`)
      }
      const { vectors, tokens, upstreamId } = family === "titan"
        ? yield* embedTitan(invoke, connection, request, texts)
        : yield* embedCohere(invoke, connection, request, texts)
      const embeddings = yield* VectorEncoding.finish(request, vectors)
      return {
        embeddings,
        promptTokens: tokens,
        totalTokens: tokens,
        ...(upstreamId !== undefined ? { upstreamId } : {})
      } satisfies EmbeddingProvider.EmbeddingResult
    }, Span.within("Bedrock.embed"))
    const rerank = Effect.fnUntraced(function*(connection: EmbeddingProvider.Connection, request: RerankProvider.UpstreamRerank) {
      const withImage = request.documents.findIndex((d) => d.image !== undefined)
      if (withImage !== -1) {
        return yield* UpstreamError.unsupportedInput(`document ${withImage} has an image; Bedrock's rerank models take text documents only`)
      }
      const documents = request.documents.map((d) => d.text ?? "")
      const { json } = yield* invoke(connection, request.upstreamModel, {
        query: request.query,
        documents,
        top_n: documents.length,
        ...(request.upstreamModel.includes("cohere.rerank") ? { api_version: 2 } : {})
      })
      const response = yield* decodeRerank(json)
      const scores = yield* RerankWire.checkScores(response.results, documents.length)
      return { scores, searchUnits: undefined, totalTokens: undefined } satisfies RerankProvider.RerankResult
    }, Span.within("Bedrock.rerank"))
    return { embed, rerank }
  })
