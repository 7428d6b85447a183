/**
 * Endpoints that need no key: health.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { wire } from "../errors/ApiError.ts"

/**
 * `GET /health`: the process is up and its store answers (200); 503 in the error envelope when
 * the store fails or does not answer in time, so a load balancer takes the replica out.
 *
 * @since 0.1.0
 */
export class SystemApi extends HttpApiGroup.make("system", { topLevel: true }).add(
  HttpApiEndpoint.get("health", "/health", {
    success: Schema.Struct({ status: Schema.Literal("ok") }),
    error: wire[503]
  })
) {}
