/**
 * The embeddings endpoints.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { modelCallErrors, wire } from "../schema/ApiError.ts"
import { EmbeddingRequest } from "../schema/EmbeddingRequest.ts"
import { EmbeddingModelList, EmbeddingResponse, ListModelsQuery } from "../schema/EmbeddingResponse.ts"
import { RoutePlanReport } from "../schema/RoutePlanReport.ts"
import { Authorization } from "./Authorization.ts"

/**
 * `POST /embeddings` (operation `createEmbeddings`): embeds the input with the model, routed by
 * the request's provider preferences. `GET /embeddings/models` (operation
 * `listEmbeddingsModels`): the embedding models the gateway can serve.
 *
 * **Details**
 *
 * 401 comes from the {@link Authorization} middleware. A body that fails its schema is a 400
 * naming the broken fields (the API-wide schema-error middleware). Upstream failures are mapped
 * by `UpstreamError.toApiError` (429, 502, 503, 524, 529, or 400/413 when the provider
 * refused the input); no eligible provider is a 404.
 *
 * @since 0.1.0
 */
export class EmbeddingsApi extends HttpApiGroup.make("embeddings")
  .add(
    HttpApiEndpoint.post("create", "/embeddings", {
      payload: EmbeddingRequest,
      success: EmbeddingResponse,
      error: modelCallErrors
    }).annotate(OpenApi.Identifier, "createEmbeddings"),
    HttpApiEndpoint.get("listModels", "/embeddings/models", {
      query: ListModelsQuery,
      success: EmbeddingModelList,
      error: [wire[400], wire[429], wire[500]]
    }).annotate(OpenApi.Identifier, "listEmbeddingsModels"),
    HttpApiEndpoint.post("plan", "/embeddings/plan", {
      payload: EmbeddingRequest,
      success: RoutePlanReport,
      error: [wire[400], wire[403], wire[404], wire[429], wire[500], wire[503]]
    }).annotate(OpenApi.Identifier, "planEmbeddings")
  )
  .middleware(Authorization)
{}
