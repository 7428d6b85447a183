/**
 * The model listing of the public API.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { wire } from "../errors/ApiError.ts"
import { EmbeddingModelList, ListModelsQuery } from "../schema/EmbeddingResponse.ts"
import { Authorization } from "./Authorization.ts"

/**
 * `GET /models` (operation `getModels`): every model the gateway serves, in the public API's
 * shape (`{ data, links, total_count }`), so `openai.models.list()` and the OpenRouter SDK's
 * `models.list()` work against the gateway. All its models are embedding models today, so it
 * lists what `GET /embeddings/models` lists. Any valid key may call it.
 *
 * @since 0.1.0
 */
export class ModelsApi extends HttpApiGroup.make("models")
  .add(
    HttpApiEndpoint.get("list", "/models", {
      query: ListModelsQuery,
      success: EmbeddingModelList,
      error: [wire[400], wire[429], wire[500]]
    }).annotate(OpenApi.Identifier, "getModels")
  )
  .middleware(Authorization)
{}
