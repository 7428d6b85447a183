import { SchemaErrors } from "@switchyard/core/api/SchemaErrors"
import * as DecodeIssue from "@switchyard/core/schema/DecodeIssue"
import { BadRequest } from "@switchyard/core/schema/ApiError"
import { Effect } from "effect"
import { type HttpApiError, HttpApiMiddleware } from "effect/http-api"

const what = {
  Params: "path parameter",
  Headers: "header",
  Query: "query parameter",
  Payload: "request body"
} as const

/**
 * A request that fails its schema answers 400 with the envelope: the message names each field and
 * the rule it broke (`Invalid request body: model: Missing key; input[2]: ...`) and
 * `metadata.issues` lists them as `{ path, message }`. A response that fails its own schema is the
 * gateway's bug: 500, logged, with nothing of the value in the answer. The API's middleware and
 * a batch's lines (LineRunner.ts) both answer through it.
 */
export const transform = (error: HttpApiError.HttpApiSchemaError): Effect.Effect<never, BadRequest> => {
  if (error.kind === "Body" || error.kind === "ResponseHeaders") {
    return Effect.logError("A response failed its own schema", error.cause.message).pipe(
      Effect.andThen(Effect.die(error))
    )
  }
  const issues = DecodeIssue.fromSchemaError(error.cause)
  const summary = issues.length === 1 && issues[0]!.path === "(root)"
    ? issues[0]!.message
    : issues.length > 0
    ? DecodeIssue.summarize(issues)
    : error.cause.message
  return Effect.fail(
    new BadRequest({
      message: `Invalid ${what[error.kind]}: ${summary}`,
      metadata: { kind: error.kind.toLowerCase(), issues }
    })
  )
}

export const layer = HttpApiMiddleware.layerSchemaErrorTransform(SchemaErrors, transform)
