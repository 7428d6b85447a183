import type { EmbeddingProvider } from "@switchyard/core"
import { Effect, Schema } from "effect"
import { taskTypes } from "./Gemini.ts"
import * as InputType from "./InputType.ts"
import * as RerankWire from "./RerankWire.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as WireFormat from "./WireFormat.ts"

/** The Ranking API's host (Discovery Engine), where a Vertex provider's rerank calls go by default. */
export const rankingBaseUrl = "https://discoveryengine.googleapis.com"

const PredictResponse = Schema.Struct({
  predictions: Schema.Array(Schema.Struct({
    embeddings: Schema.Struct({
      values: VectorEncoding.FloatVector,
      statistics: Schema.optionalKey(Schema.Struct({ token_count: Schema.optionalKey(Schema.Finite) }))
    })
  }))
})

const projectPath = (connection: EmbeddingProvider.Connection) =>
  `/v1/projects/${encodeURIComponent(connection.project ?? "")}`

const requestOf = Effect.fnUntraced(function*(
  request: EmbeddingProvider.UpstreamRequest,
  connection: EmbeddingProvider.Connection
) {
  if (request.input._tag !== "Texts") return yield* WireFormat.unsupported("Vertex AI's text embeddings take text only")
  const purpose = InputType.purposeOf(request.inputType)
  const taskType = purpose === undefined ? undefined : taskTypes[purpose]
  return {
    path: `${projectPath(connection)}/locations/${encodeURIComponent(connection.location ?? "")}/publishers/google/models/${
      encodeURIComponent(request.upstreamModel)
    }:predict`,
    body: {
      instances: request.input.texts.map((content) => ({ content, ...(taskType !== undefined ? { task_type: taskType } : {}) })),
      parameters: {
        // Vertex cuts a long input's end only when told to (`autoTruncate`).
        autoTruncate: request.truncate === "end",
        ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {})
      }
    }
  }
})

/**
 * Vertex AI's text embeddings (`:predict` on a Google publisher model): one instance per input,
 * `input_type` as `task_type`, the vectors and per-input token counts in `predictions`. Vertex
 * cuts a long input's end only with `truncate: "end"` (`autoTruncate: true`); otherwise an
 * over-long input is refused.
 */
const wireFormat: WireFormat.WireFormat<typeof PredictResponse.Type> = {
  name: "Vertex",
  keyHeaders: WireFormat.bearer,
  response: PredictResponse,
  request: requestOf,
  vectors: (response) =>
    Effect.succeed(response.predictions.map((prediction, index) => ({ index, value: prediction.embeddings.values }))),
  usage: (response) => {
    const tokens = response.predictions.reduce((sum, p) => sum + (p.embeddings.statistics?.token_count ?? 0), 0)
    return { promptTokens: tokens, totalTokens: tokens }
  }
}

export const make = WireFormat.make(wireFormat)

const RankResponse = Schema.Struct({
  records: Schema.Array(Schema.Struct({ id: Schema.String, score: Schema.Finite }))
})

/**
 * Google's Ranking API (`rankingConfigs/default_ranking_config:rank`, `semantic-ranker-*`
 * models): records carry their position as `id`, every record comes back scored (no `topN`; the
 * gateway cuts), the documents are not asked back. Billed per call, so nothing is counted here.
 */
const rerankFormat: RerankWire.RerankFormat<typeof RankResponse.Type> = {
  name: "Vertex",
  keyHeaders: WireFormat.bearer,
  path: (connection) => `${projectPath(connection)}/locations/global/rankingConfigs/default_ranking_config:rank`,
  baseUrl: (connection) => connection.rankingBaseUrl ?? rankingBaseUrl,
  response: RankResponse,
  body: (request, documents) => ({
    model: request.upstreamModel,
    query: request.query,
    records: documents.map((content, index) => ({ id: String(index), content })),
    ignoreRecordDetailsInResponse: true
  }),
  scores: (response) => response.records.map((record) => ({ index: Number(record.id), relevance_score: record.score })),
  billed: () => ({})
}

export const makeRerank = RerankWire.make(rerankFormat)
