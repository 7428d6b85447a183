/**
 * The model listing of the public API.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import { EmbeddingModelList } from "../schema/EmbeddingResponse.ts"
import {
  CountModelsQuery,
  ModelCount,
  ModelEnvelope,
  ModelIdParams,
  ModelObject,
  ModelPathParams,
  ModelsQuery
} from "../schema/Models.ts"
import { Authorization } from "./Authorization.ts"

/**
 * The models the gateway serves, in OpenRouter's shapes, so `openai.models.list()` and
 * `retrieve(id)`, and the OpenRouter SDK's `models.list()`, `count()` and `listForUser()` work
 * against the gateway, and so does its `models.get()`.
 *
 * - `GET /models` (operation `getModels`), `GET /models/count` (`listModelsCount`),
 *   `GET /models/{id}` (`getModel`; also `GET /models/{author}/{slug}`) and OpenRouter's
 *   `GET /model/{author}/{slug}` (`models.get`, the record under `data`) need no key, as
 *   OpenRouter's do: they show what the gateway serves with its own provider credentials.
 *   `output_modalities` picks `embeddings` (the default), `rerank` or `all`.
 * - `GET /models/user` (`listModelsUser`) needs a key and shows that key's workspace's view:
 *   providers its own credentials (BYOK) activate are added, and those its settings (`only`,
 *   `ignore`, `data_collection`, `zdr`) leave out are not listed.
 *
 * @since 0.1.0
 */
export class ModelsApi extends HttpApiGroup.make("models")
  .add(
    HttpApiEndpoint.get("list", "/models", {
      query: ModelsQuery,
      success: EmbeddingModelList,
      error: [wire[400], wire[500]]
    }).annotate(OpenApi.Identifier, "getModels"),
    HttpApiEndpoint.get("count", "/models/count", {
      query: CountModelsQuery,
      success: ModelCount,
      error: [wire[400], wire[500]]
    }).annotate(OpenApi.Identifier, "listModelsCount"),
    HttpApiEndpoint.get("listForUser", "/models/user", {
      query: ModelsQuery,
      success: EmbeddingModelList,
      error: [wire[400], wire[500], wire[503]]
    }).annotate(OpenApi.Identifier, "listModelsUser").middleware(Authorization),
    HttpApiEndpoint.get("get", "/models/:id", {
      params: ModelIdParams,
      success: ModelObject,
      error: [wire[404], wire[500]]
    }).annotate(OpenApi.Identifier, "getModel"),
    HttpApiEndpoint.get("getByPath", "/models/:author/:slug", {
      params: ModelPathParams,
      success: ModelObject,
      error: [wire[404], wire[500]]
    }).annotate(OpenApi.Identifier, "getModelByPath"),
    HttpApiEndpoint.get("getModel", "/model/:author/:slug", {
      params: ModelPathParams,
      success: ModelEnvelope,
      error: [wire[404], wire[500]]
    }).annotate(OpenApi.Identifier, "getOpenRouterModel")
  )
{}
