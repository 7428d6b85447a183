/**
 * The rerank endpoint.
 *
 * @since 0.4.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { modelCallErrors, wire } from "../schema/ApiError.ts"
import { EmbeddingModelList, ListModelsQuery } from "../schema/EmbeddingResponse.ts"
import { RerankRequest } from "../schema/RerankRequest.ts"
import { RerankResponse } from "../schema/RerankResponse.ts"
import { RoutePlanReport } from "../schema/RoutePlanReport.ts"
import { Authorization } from "./Authorization.ts"

/**
 * `POST /rerank` (operation `createRerank`): scores the documents against the query with the
 * model, routed by the request's provider preferences exactly as embeddings are.
 * `POST /rerank/plan` (operation `planRerank`): the route and the worst-case cost, without
 * calling any provider. `GET /rerank/models` (operation `listRerankModels`): the rerank models
 * the gateway can serve, in the model listing's shape.
 *
 * **Details**
 *
 * A model of another task (an embeddings model) is a 400 naming its task. The other statuses are
 * those of `POST /embeddings`: 402 at a limit, budget or credits, 404 for an unknown model or no
 * eligible provider, upstream failures mapped by `UpstreamError.toApiError`.
 *
 * @since 0.4.0
 */
export class RerankApi extends HttpApiGroup.make("rerank")
  .add(
    HttpApiEndpoint.post("create", "/rerank", {
      payload: RerankRequest,
      success: RerankResponse,
      error: modelCallErrors
    }).annotate(OpenApi.Identifier, "createRerank"),
    HttpApiEndpoint.post("plan", "/rerank/plan", {
      payload: RerankRequest,
      success: RoutePlanReport,
      error: [wire[400], wire[403], wire[404], wire[429], wire[500], wire[503]]
    }).annotate(OpenApi.Identifier, "planRerank"),
    HttpApiEndpoint.get("listModels", "/rerank/models", {
      query: ListModelsQuery,
      success: EmbeddingModelList,
      error: [wire[400], wire[429], wire[500]]
    }).annotate(OpenApi.Identifier, "listRerankModels")
  )
  .middleware(Authorization)
{}
