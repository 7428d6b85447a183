/**
 * The credit endpoints: a workspace's totals in the public API's shape, and the operator's
 * operation that adds credits.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import { AddCreditsBody, CreditsQuery, CreditsResponse } from "../schema/Credits.ts"
import { Authorization } from "./Authorization.ts"

const errors = [wire[400], wire[403], wire[404], wire[429], wire[500], wire[503]]

/**
 * `GET /credits` (the workspace's `total_credits` and `total_usage`) and `POST /credits`
 * (adds credits). Both require a management key.
 *
 * @since 0.1.0
 */
export class CreditsApi extends HttpApiGroup.make("credits")
  .add(
    HttpApiEndpoint.get("get", "/credits", {
      query: CreditsQuery,
      success: CreditsResponse,
      error: errors
    }),
    HttpApiEndpoint.post("add", "/credits", {
      payload: AddCreditsBody,
      success: CreditsResponse,
      error: errors
    })
  )
  .middleware(Authorization)
{}
