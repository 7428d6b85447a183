/**
 * The key endpoints.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { wire } from "../errors/ApiError.ts"
import { ApiKeyList, ListKeysQuery } from "../schema/ApiKey.ts"
import { Authorization } from "./Authorization.ts"

/**
 * `GET /keys`: the calling user's keys in one workspace, for a management key.
 *
 * @since 0.1.0
 */
export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/keys", {
      query: ListKeysQuery,
      success: ApiKeyList,
      error: [wire[400], wire[403], wire[404], wire[429], wire[500]]
    })
  )
  .middleware(Authorization)
{}
