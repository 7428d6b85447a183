import { SchemaErrors } from "@switchyard/core/api/SchemaErrors"
import { BadRequest } from "@switchyard/core/errors/ApiError"
import { Effect } from "effect"
import { HttpApiMiddleware } from "effect/http-api"

const what = {
  Params: "path parameter",
  Headers: "header",
  Query: "query parameter",
  Body: "request body",
  Payload: "request body",
  ResponseHeaders: "response header"
} as const

/**
 * A request that fails its schema answers 400 with the envelope and the schema's own report of
 * which field broke which rule.
 */
export const layer = HttpApiMiddleware.layerSchemaErrorTransform(SchemaErrors, (error) =>
  Effect.fail(
    new BadRequest({
      message: `Invalid ${what[error.kind]}: ${error.cause.message}`,
      metadata: { kind: error.kind.toLowerCase() }
    })
  ))
