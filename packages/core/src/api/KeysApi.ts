/**
 * The key endpoints: the spec's listing, plus creating, reading, updating and deleting keys and
 * reading the calling key's own record, with the public API's paths and shapes.
 *
 * **Details**
 *
 * Every endpoint but `GET /key` requires a management key (403 otherwise). The single-key
 * operations see only the calling user's keys; any other hash is a 404.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import {
  ApiKeyDeleted,
  ApiKeyList,
  ApiKeyResponse,
  CreatedApiKey,
  CreateKeyBody,
  CurrentKeyResponse,
  KeyHashParams,
  ListKeysQuery,
  UpdateKeyBody
} from "../schema/ApiKey.ts"
import { Authorization } from "./Authorization.ts"

const errors = [wire[400], wire[403], wire[404], wire[429], wire[500], wire[503]]

/**
 * `GET /keys`, `POST /keys`, `GET|PATCH|DELETE /keys/{hash}` and `GET /key`.
 *
 * @since 0.1.0
 */
export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/keys", {
      query: ListKeysQuery,
      success: ApiKeyList,
      error: errors
    }),
    HttpApiEndpoint.post("create", "/keys", {
      payload: CreateKeyBody,
      success: CreatedApiKey.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.get("current", "/key", {
      success: CurrentKeyResponse,
      error: [wire[429], wire[500], wire[503]]
    }),
    HttpApiEndpoint.get("get", "/keys/:hash", {
      params: KeyHashParams,
      success: ApiKeyResponse,
      error: errors
    }),
    HttpApiEndpoint.patch("update", "/keys/:hash", {
      params: KeyHashParams,
      payload: UpdateKeyBody,
      success: ApiKeyResponse,
      error: errors
    }),
    HttpApiEndpoint.delete("delete", "/keys/:hash", {
      params: KeyHashParams,
      success: ApiKeyDeleted,
      error: errors
    })
  )
  .middleware(Authorization)
{}
