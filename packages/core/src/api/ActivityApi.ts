/**
 * Looking back at served requests: one generation's record and daily activity, with the public
 * API's paths and shapes (`generations.getGeneration`, `analytics.getUserActivity`).
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import { ActivityQuery, ActivityResponse, FailuresQuery, FailuresResponse, GenerationQuery, GenerationResponse } from "../schema/Activity.ts"
import { Authorization } from "./Authorization.ts"

const errors = [wire[400], wire[403], wire[404], wire[429], wire[500], wire[503]]

/**
 * `GET /generation?id=` (any key of the generation's workspace), `GET /activity` and
 * `GET /activity/failures` (a management key).
 *
 * @since 0.1.0
 */
export class ActivityApi extends HttpApiGroup.make("activity")
  .add(
    HttpApiEndpoint.get("generation", "/generation", { query: GenerationQuery, success: GenerationResponse, error: errors }),
    HttpApiEndpoint.get("activity", "/activity", { query: ActivityQuery, success: ActivityResponse, error: errors }),
    HttpApiEndpoint.get("failures", "/activity/failures", { query: FailuresQuery, success: FailuresResponse, error: errors })
  )
  .middleware(Authorization)
{}
