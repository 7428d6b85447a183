import { EmbeddingProvider } from "@switchyard/core"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect, Redacted, Schema } from "effect"
import { HttpClient } from "effect/http"
import * as RerankWire from "./RerankWire.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as WireFormat from "./WireFormat.ts"
import * as Span from "../instrumentation/Span.ts"

/** Where Text Embeddings Inference listens when run as its documentation shows. */
export const baseUrl = "http://127.0.0.1:8080"

/** TEI's default `--max-client-batch-size`: the most inputs one `/tokenize` call carries. */
const tokenizeBatch = 32

// `POST /embed` answers a bare list of vectors, in input order, and no counts.
const EmbedResponse = Schema.Array(VectorEncoding.FloatVector)

// `POST /tokenize` answers, per input, its tokens (special ones included).
const TokenizeResponse = Schema.Array(Schema.Array(Schema.Struct({ id: Schema.Int })))

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
 * The token count of each distinct text, asked of the server's own tokenizer in batches of
 * {@link tokenizeBatch}: a text repeated within the request is counted once and looked up after.
 */
const countTokens = Effect.fnUntraced(function*(
  client: HttpClient.HttpClient,
  connection: EmbeddingProvider.Connection,
  headers: Readonly<Record<string, string>>,
  texts: ReadonlyArray<string>
) {
  const counts = new Map<string, number>()
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
    for (const [index, text] of batch.entries()) counts.set(text, tokenized[index]!.length)
  }
  return texts.reduce((sum, text) => sum + (counts.get(text) ?? 0), 0)
})

/**
 * Text Embeddings Inference's embeddings: `POST /embed` (`inputs`, `truncate`, `normalize`,
 * `dimensions`), then the tokens counted through its `POST /tokenize`, as `/embed` reports none.
 */
export const make = Effect.gen(function*() {
  const client = yield* HttpClient.HttpClient
  const embed = Effect.fnUntraced(function*(
    connection: EmbeddingProvider.Connection,
    request: EmbeddingProvider.UpstreamRequest
  ) {
    const texts = yield* textsOf(request)
    const headers = connection.apiKey === undefined ? {} : WireFormat.bearer(Redacted.value(connection.apiKey))
    const json = yield* UpstreamHttp.post(client, {
      connection,
      path: "/embed",
      headers,
      body: {
        inputs: texts,
        truncate: false,
        normalize: true,
        ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {})
      }
    })
    const vectors = yield* decodeEmbed(json)
    const embeddings = yield* VectorEncoding.finish(request, vectors.map((value, index) => ({ index, value })))
    const tokens = yield* countTokens(client, connection, headers, texts)
    return { embeddings, promptTokens: tokens, totalTokens: tokens } satisfies EmbeddingProvider.EmbeddingResult
  }, Span.within("Tei.embed"))
  return EmbeddingProvider.EmbeddingProvider.of({ embed })
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
