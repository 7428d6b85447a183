/**
 * The catalog as callers see it: its providers and a model's endpoints with prices, data policy,
 * status and the figures the gateway measures (`providers.list`, `endpoints.list`).
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import { ModelEndpoints, ModelEndpointsParams, ProviderList } from "../schema/ProviderListing.ts"
import { Authorization } from "./Authorization.ts"

/**
 * `GET /providers` and `GET /models/{author}/{slug}/endpoints`, for any valid key (whether a
 * provider is active depends on the key's workspace's BYOK credentials).
 *
 * @since 0.1.0
 */
export class ProvidersApi extends HttpApiGroup.make("providers")
  .add(
    HttpApiEndpoint.get("list", "/providers", { success: ProviderList, error: [wire[429], wire[500]] }),
    HttpApiEndpoint.get("endpoints", "/models/:author/:slug/endpoints", {
      params: ModelEndpointsParams,
      success: ModelEndpoints,
      error: [wire[404], wire[429], wire[500]]
    })
  )
  .middleware(Authorization)
{}
