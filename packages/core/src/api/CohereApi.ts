/**
 * Cohere's v2 rerank route, for the `cohere-ai` SDK.
 *
 * @since 0.4.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { modelCallErrors } from "../schema/ApiError.ts"
import { CohereRerankRequest, CohereRerankResponse } from "../schema/CohereRerank.ts"
import { Authorization } from "./Authorization.ts"

/**
 * `POST /api/v2/rerank` (operation `cohereRerankV2`): `POST /rerank` in Cohere's v2 shapes, so
 * `new CohereClientV2({ baseUrl: "http://host:8080/api" }).rerank(...)` works. It is routed,
 * billed and answered with the same statuses as `POST /api/v1/rerank`. The group sits outside the
 * `/api/v1` prefix: Cohere's SDK appends `v2/rerank` to its base URL.
 *
 * @since 0.4.0
 */
export class CohereApi extends HttpApiGroup.make("cohere")
  .add(
    HttpApiEndpoint.post("rerank", "/v2/rerank", {
      payload: CohereRerankRequest,
      success: CohereRerankResponse,
      error: modelCallErrors
    }).annotate(OpenApi.Identifier, "cohereRerankV2")
  )
  .middleware(Authorization)
  .prefix("/api")
{}
