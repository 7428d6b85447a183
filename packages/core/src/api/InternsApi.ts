/**
 * The intern endpoints: create, list, get, update (PATCH), delete, provision and suspend, with
 * the public API's paths and shapes.
 *
 * **Details**
 *
 * Every endpoint sits behind {@link Authorization} (the key selects the caller, the workspace and
 * the visible interns; checked before anything reads the body), {@link RegionalHosts} (before
 * the key) and {@link InternPolicy}, which limits the body to 1048576 bytes and answers every
 * request failure in the string-code envelope.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema } from "effect/http-api"
import { wire } from "../errors/InternError.ts"
import {
  CreateInternBody,
  DeleteInternBody,
  Deleting,
  InternIdParams,
  InternList,
  InternRecord,
  ListInternsQuery,
  Provisioning,
  Suspended,
  UpdateInternBody
} from "../schema/Intern.ts"
import { Authorization } from "./Authorization.ts"

/**
 * The request policy of the intern endpoints.
 *
 * **Details**
 *
 * Its implementation reads the body (after the key is checked) with a 1048576-byte limit whether or not `Content-Length` is sent (`payload_too_large`), answers a
 * non-JSON content type with `unsupported_media_type`, a body that fails its schema with
 * `invalid_body`, a query or path that does its own with `invalid_request`, a request over the
 * time limit with `408`, a store that does not answer with `503` (`store_unavailable`, with
 * `Retry-After`), and any unexpected failure with `internal_error`.
 *
 * @since 0.1.0
 */
export class InternPolicy extends HttpApiMiddleware.Service<InternPolicy>()("@switchyard/core/api/InternPolicy", {
  error: [
    wire.InvalidBody,
    wire.InvalidRequest,
    wire.InternRequestTimeout,
    wire.PayloadTooLarge,
    wire.UnsupportedMediaType,
    wire.InternalError,
    wire.InternServiceUnavailable
  ]
}) {}

/**
 * The intern endpoints' refusal of regional hostnames (`403`, `metadata.reason: "regional_host"`),
 * before the key is checked: it reads nothing but the `Host` (or, behind a trusted proxy,
 * `X-Forwarded-Host`) header.
 *
 * @since 0.10.0
 */
export class RegionalHosts extends HttpApiMiddleware.Service<RegionalHosts>()("@switchyard/core/api/RegionalHosts", {
  error: [wire.RegionalHostRefused]
}) {}

/**
 * @since 0.1.0
 */
export class InternsApi extends HttpApiGroup.make("interns")
  .add(
    HttpApiEndpoint.post("create", "/interns", {
      payload: CreateInternBody,
      success: InternRecord.pipe(HttpApiSchema.status(201)),
      error: [wire.InvalidBody, wire.ForeignWorkspace, wire.NameTaken]
    }),
    HttpApiEndpoint.get("list", "/interns", {
      query: ListInternsQuery,
      success: InternList,
      error: [wire.ForeignWorkspace]
    }),
    HttpApiEndpoint.get("get", "/interns/:internId", {
      params: InternIdParams,
      success: InternRecord,
      error: [wire.InternNotFound]
    }),
    HttpApiEndpoint.patch("update", "/interns/:internId", {
      params: InternIdParams,
      payload: UpdateInternBody,
      success: InternRecord,
      error: [wire.InternNotFound, wire.NameTaken]
    }),
    HttpApiEndpoint.delete("delete", "/interns/:internId", {
      params: InternIdParams,
      payload: [DeleteInternBody, Schema.Null],
      success: Deleting.pipe(HttpApiSchema.status(202)),
      error: [wire.InvalidBody, wire.InternNotFound, wire.InternBusy]
    }),
    HttpApiEndpoint.post("provision", "/interns/:internId/provision", {
      params: InternIdParams,
      success: Provisioning.pipe(HttpApiSchema.status(202)),
      error: [wire.InternNotFound, wire.InternBusy, wire.UpstreamUnavailable]
    }),
    HttpApiEndpoint.post("suspend", "/interns/:internId/suspend", {
      params: InternIdParams,
      success: Suspended,
      error: [wire.InternNotFound, wire.InternBusy, wire.UpstreamUnavailable]
    })
  )
  // Outermost last: the regional hostname first, then the key, then the intern policy, which reads
  // the body: an unauthenticated request is a 401 before anything reads its body.
  .middleware(InternPolicy)
  .middleware(Authorization)
  .middleware(RegionalHosts)
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
{}
