/**
 * Providers managed at runtime, for instance administrators: create, read, change, delete and test
 * one provider. `GET /providers` (the public list) is in `ProvidersApi`.
 *
 * @since 0.1.0
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { conflictWire, wire } from "../schema/ApiError.ts"
import {
  CreateProviderBody,
  ManagedProviderResponse,
  ProviderDeleted,
  ProviderSlugParams,
  ProviderTestResult,
  UpdateProviderBody
} from "../catalog/ManagedProvider.ts"
import { Authorization } from "./Authorization.ts"

const errors = [wire[400], wire[403], wire[404], conflictWire, wire[429], wire[500], wire[503]]

/**
 * `POST /providers`, `GET|PATCH|DELETE /providers/{slug}` and `POST /providers/{slug}/test`.
 * Providers of the config file (and the built-in catalog) answer 409 to changes.
 *
 * @since 0.1.0
 */
export class ProviderAdminApi extends HttpApiGroup.make("providerAdmin")
  .add(
    HttpApiEndpoint.post("create", "/providers", {
      payload: CreateProviderBody,
      success: ManagedProviderResponse.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.get("get", "/providers/:slug", { params: ProviderSlugParams, success: ManagedProviderResponse, error: errors }),
    HttpApiEndpoint.patch("update", "/providers/:slug", {
      params: ProviderSlugParams,
      payload: UpdateProviderBody,
      success: ManagedProviderResponse,
      error: errors
    }),
    HttpApiEndpoint.delete("delete", "/providers/:slug", { params: ProviderSlugParams, success: ProviderDeleted, error: errors }),
    HttpApiEndpoint.post("test", "/providers/:slug/test", { params: ProviderSlugParams, success: ProviderTestResult, error: errors })
  )
  .middleware(Authorization)
  // A provider is decoded as the config file's is: an unknown field is refused, never ignored
  // (the body's schema is an open record; the handler decodes it against the provider's).
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
{}
