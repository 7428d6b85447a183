import { EmbeddingProvider } from "@switchyard/core"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect, Schema } from "effect"
import { HttpClient } from "effect/http"
import * as RerankWire from "./RerankWire.ts"
import type * as Tokenizers from "./Tokenizers.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as WireFormat from "./WireFormat.ts"
import * as Span from "../instrumentation/Span.ts"

/** TEI's default `--max-client-batch-size`: the most inputs one `/tokenize` call carries. */
const tokenizeBatch = 32

// `POST /embed` answers a bare list of vectors, in input order, and no counts.
const EmbedResponse = Schema.Array(VectorEncoding.FloatVector)

// `POST /tokenize` answers, per input, its tokens (special ones included), each with its byte
// offsets into the input.
const TokenizeResponse = Schema.Array(Schema.Array(Schema.Struct({
  id: Schema.Int,
  special: Schema.optionalKey(Schema.Boolean),
  start: Schema.optionalKey(Schema.Int),
  stop: Schema.optionalKey(Schema.Int)
})))

const decodeEmbed = UpstreamHttp.decode(EmbedResponse)
const decodeTokenize = UpstreamHttp.decode(TokenizeResponse)

const textsOf = (request: EmbeddingProvider.UpstreamRequest) => {
  switch (request.input._tag) {
    case "Texts":
      return Effect.succeed(request.input.texts)
    case "Tokens":
      return WireFormat.unsupported("Text Embeddings Inference does not accept token ids")
    case "Multimodal":
      return WireFormat.unsupported("Text Embeddings Inference embeds text only")
  }
}

/**
 * The tokens of each distinct text, asked of the server's own tokenizer in batches of
 * {@link tokenizeBatch}: a text repeated within the request is asked once and looked up after.
 */
const tokenizeTexts = Effect.fnUntraced(function*(
  client: HttpClient.HttpClient,
  connection: EmbeddingProvider.Connection,
  texts: ReadonlyArray<string>
) {
  const headers = headersOf(connection)
  const tokens = new Map<string, ReadonlyArray<Tokenizers.ServerToken>>()
  const distinct = [...new Set(texts)]
  for (let start = 0; start < distinct.length; start += tokenizeBatch) {
    const batch = distinct.slice(start, start + tokenizeBatch)
    const json = yield* UpstreamHttp.post(client, {
      connection,
      path: "/tokenize",
      headers,
      body: { inputs: batch, add_special_tokens: true }
    })
    const tokenized = yield* decodeTokenize(json)
    if (tokenized.length !== batch.length) {
      return yield* UpstreamError.invalidResponse(`${batch.length} texts were tokenized and ${tokenized.length} answered`)
    }
    for (const [index, text] of batch.entries()) {
      tokens.set(text, tokenized[index]!.map((t) => ({ special: t.special ?? false, start: t.start ?? 0, stop: t.stop ?? 0 })))
    }
  }
  return texts.map((text) => tokens.get(text) ?? [])
})

const headersOf = UpstreamHttp.bearerOf

// TEI's truncation: `truncate` with the side it cuts (`Left` keeps the end of the text).
const truncationOf = (truncate: EmbeddingProvider.UpstreamRequest["truncate"]) =>
  truncate === "start"
    ? { truncate: true, truncation_direction: "Left" }
    : truncate === "end"
    ? { truncate: true, truncation_direction: "Right" }
    : { truncate: false }

/**
 * Text Embeddings Inference's embeddings: `POST /embed` (`inputs`, `truncate` and
 * `truncation_direction`, `normalize`, `dimensions`), then the tokens counted through its
 * `POST /tokenize`, as `/embed` reports none (a text the server cut counts what it embedded: at
 * most `maxInputTokens`). `tokenize` is that route for the gateway's own counting.
 */
export const make = Effect.gen(function*() {
  const client = yield* HttpClient.HttpClient
  const embed = Effect.fnUntraced(function*(
    connection: EmbeddingProvider.Connection,
    request: EmbeddingProvider.UpstreamRequest
  ) {
    const texts = yield* textsOf(request)
    const json = yield* UpstreamHttp.post(client, {
      connection,
      path: "/embed",
      headers: headersOf(connection),
      body: {
        inputs: texts,
        ...truncationOf(request.truncate),
        normalize: true,
        ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {})
      }
    })
    const vectors = yield* decodeEmbed(json)
    const embeddings = yield* VectorEncoding.finish(request, vectors.map((value, index) => ({ index, value })))
    const cut = request.truncate === "start" || request.truncate === "end" ? request.maxInputTokens : undefined
    const tokens = (yield* tokenizeTexts(client, connection, texts)).reduce((sum, t) => sum + Math.min(t.length, cut ?? t.length), 0)
    return { embeddings, promptTokens: tokens, totalTokens: tokens } satisfies EmbeddingProvider.EmbeddingResult
  }, Span.within("Tei.embed"))
  const tokenize = (connection: EmbeddingProvider.Connection, _upstreamModel: string, texts: ReadonlyArray<string>) =>
    tokenizeTexts(client, connection, texts)
  return { ...EmbeddingProvider.EmbeddingProvider.of({ embed }), tokenize }
})

const RerankResponse = Schema.Array(Schema.Struct({ index: Schema.Int, score: Schema.Finite }))

/**
 * Text Embeddings Inference's rerank (`POST /rerank` with `query`, `texts`), scores normalized by
 * the server (`raw_scores: false`) and no texts sent back.
 */
const rerankFormat: RerankWire.RerankFormat<typeof RerankResponse.Type> = {
  name: "Tei",
  keyHeaders: WireFormat.bearer,
  path: "/rerank",
  response: RerankResponse,
  body: (request, documents) => ({ query: request.query, texts: documents, raw_scores: false, return_text: false, truncate: false }),
  scores: (response) => response.map(({ index, score }) => ({ index, relevance_score: score })),
  billed: () => ({})
}

export const makeRerank = RerankWire.make(rerankFormat)
