/**
 * Cohere's v2 rerank and embed routes (and v1's embed), for the `cohere-ai` SDK.
 *
 * @since 0.4.0
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { modelCallErrors } from "../schema/ApiError.ts"
import { CohereEmbedByType, CohereEmbedFloats, CohereEmbedV1Request, CohereEmbedV2Request } from "../schema/CohereEmbed.ts"
import { CohereRerankRequest, CohereRerankResponse } from "../schema/CohereRerank.ts"
import { Authorization } from "./Authorization.ts"

/**
 * `POST /api/v2/rerank` (operation `cohereRerankV2`): `POST /rerank` in Cohere's v2 shapes, so
 * `new CohereClientV2({ baseUrl: "http://host:8080/api" }).rerank(...)` works. It is routed,
 * billed and answered with the same statuses as `POST /api/v1/rerank`. `POST /api/v2/embed`
 * (`cohereEmbedV2`) and `POST /api/v1/embed` (`cohereEmbedV1`) are `POST /embeddings` in
 * Cohere's shapes (`schema/CohereEmbed`), every type of `embedding_types` in one answer. The
 * group sits outside the `/api/v1` prefix: Cohere's SDK appends `v2/rerank` to its base URL.
 *
 * @since 0.4.0
 */
export class CohereApi extends HttpApiGroup.make("cohere")
  .add(
    HttpApiEndpoint.post("rerank", "/v2/rerank", {
      payload: CohereRerankRequest,
      success: CohereRerankResponse,
      error: modelCallErrors
    }).annotate(OpenApi.Identifier, "cohereRerankV2"),
    HttpApiEndpoint.post("embedV2", "/v2/embed", {
      payload: CohereEmbedV2Request,
      success: CohereEmbedByType,
      error: modelCallErrors
    }).annotate(OpenApi.Identifier, "cohereEmbedV2"),
    HttpApiEndpoint.post("embedV1", "/v1/embed", {
      payload: CohereEmbedV1Request,
      success: Schema.Union([CohereEmbedByType, CohereEmbedFloats]),
      error: modelCallErrors
    }).annotate(OpenApi.Identifier, "cohereEmbedV1")
  )
  .middleware(Authorization)
  .prefix("/api")
{}
