/**
 * The bring-your-own-key endpoints, with the public API's paths and shapes.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import {
  ByokDeleted,
  ByokIdParams,
  ByokList,
  ByokResponse,
  CreateByokBody,
  ListByokQuery,
  UpdateByokBody
} from "../schema/Byok.ts"
import { Authorization } from "./Authorization.ts"

const errors = [wire[400], wire[403], wire[404], wire[429], wire[500], wire[503]]

/**
 * `GET|POST /byok` and `GET|PATCH|DELETE /byok/{id}`, for a management key. Secrets go in and
 * never come out.
 *
 * @since 0.1.0
 */
export class ByokApi extends HttpApiGroup.make("byok")
  .add(
    HttpApiEndpoint.get("list", "/byok", {
      query: ListByokQuery,
      success: ByokList,
      error: errors
    }),
    HttpApiEndpoint.post("create", "/byok", {
      payload: CreateByokBody,
      success: ByokResponse.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.get("get", "/byok/:id", {
      params: ByokIdParams,
      success: ByokResponse,
      error: errors
    }),
    HttpApiEndpoint.patch("update", "/byok/:id", {
      params: ByokIdParams,
      payload: UpdateByokBody,
      success: ByokResponse,
      error: errors
    }),
    HttpApiEndpoint.delete("delete", "/byok/:id", {
      params: ByokIdParams,
      success: ByokDeleted,
      error: errors
    })
  )
  .middleware(Authorization)
{}
