/**
 * The API-wide middleware that turns a request that fails its schema (path, query, headers or
 * body) into the endpoint's 400 envelope instead of an empty 400.
 *
 * @since 0.1.0
 */
import { HttpApiMiddleware } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"

/**
 * @since 0.1.0
 */
export class SchemaErrors extends HttpApiMiddleware.Service<SchemaErrors>()("@switchyard/core/api/SchemaErrors", {
  error: wire[400]
}) {}
