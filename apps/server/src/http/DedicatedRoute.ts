import { Authorization, type Caller } from "@switchyard/core/api/Authorization"
import { SchemaErrors } from "@switchyard/core/api/SchemaErrors"
import type { ApiError } from "@switchyard/core/errors/ApiError"
import { Context, Effect, Schema, SchemaAST, SchemaIssue, Tracer } from "effect"
import { Statement } from "effect/sql"
import { HttpRouter, HttpServerRequest, HttpServerRespondable, HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiError, type HttpApiEndpoint, type HttpApiGroup } from "effect/http-api"
import type { unhandled } from "effect/Types"
import * as SchemaErrorsLive from "./SchemaErrorsLive.ts"

/**
 * A JSON endpoint of the contract served by a route of its own, ahead of the HttpApi route of the
 * same method and path, with less machinery per request and the same answers.
 *
 * **Details**
 *
 * It is a global router middleware, installed after the access log and the policies, so it runs
 * inside them exactly where the router would: it takes a request whose method and path are the
 * endpoint's and whose body is JSON (no `content-type`, or `application/json`), and hands every
 * other request to the router, so the HttpApi route still answers the rest (another content type's
 * 415, a trailing slash...) as before. What it takes, it serves as `HttpApiBuilder` would: the
 * same bearer security (the `Authorization` middleware's own implementation) before the body is
 * read, the body read and decoded with the endpoint's own payload schema and parse options, a
 * schema failure answered by the schema-error middleware's own transform, the handler run with
 * the caller provided, its failures encoded with the endpoint's error schemas into their envelope
 * and status, the store's statement hook of the route's build context provided, and the route
 * interruptible (the body deadline interrupts it), as the router makes
 * its routes. The endpoint stays in the contract, so the client and `/api/v1/openapi.json` are
 * unchanged; the handler is the one the HttpApi route runs. Only endpoints whose middleware is
 * exactly the bearer security and the schema errors can be served so; anything else stops the
 * start.
 */
export const layer = <Endpoint extends HttpApiEndpoint.ConstraintRequest, R>(options: {
  readonly api: { readonly annotations: Context.Context<never> }
  readonly group: HttpApiGroup.Constraint
  readonly endpoint: Endpoint
  /** Serves a decoded request of an authenticated caller. */
  readonly handler: Effect.Effect<
    (payload: Endpoint["~Payload"]["Type"], request: HttpServerRequest.HttpServerRequest) => Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      ApiError,
      Caller
    >,
    never,
    R
  >
}) =>
  HttpRouter.middleware(
    Effect.gen(function*() {
      const { api } = options
      const group = options.group as unknown as HttpApiGroup.Top
      const endpoint = options.endpoint as unknown as HttpApiEndpoint.Top
      const middlewares = [...endpoint.middlewares].map((m) => (m as { readonly key: string }).key).sort()
      const expected = [Authorization.key, SchemaErrors.key].sort()
      if (middlewares.join() !== expected.join()) {
        return yield* Effect.die(
          new Error(`A dedicated route serves only endpoints behind ${expected.join(" and ")}; ${endpoint.path} has ${middlewares.join(", ")}`)
        )
      }
      const json = endpoint.payload.get(jsonType)
      if (json === undefined || json.encoding._tag !== "Json") {
        return yield* Effect.die(new Error(`A dedicated route serves only JSON bodies; ${endpoint.path} takes none`))
      }
      const handle = yield* options.handler
      // The one reference of the route's build context that a request reads from its own fiber:
      // the store's statement hook (`StoreStatements.counting`), which counts each statement run.
      // Provided alone, as one overlay, not by merging the whole build context into every
      // request's (a copy of every service per request, as HttpApiBuilder does for a group).
      const statementHook = yield* Statement.CurrentTransformer
      const authorization = yield* Authorization
      const bearer = authorization.bearer
      const credential = HttpApiBuilder.securityDecode(Authorization.security.bearer)

      // The endpoint's own codecs and parse options, as HttpApiBuilder derives them.
      const annotations = Context.merge(Context.merge(api.annotations, group.annotations), endpoint.annotations)
      const fallback = Context.getOrUndefined(annotations, HttpApi.ParseOptions)
      const decode = Schema.decodeUnknownEffect(
        Schema.Union(json.schemas),
        Context.getOrUndefined(annotations, HttpApi.PayloadParseOptions) ?? fallback
      )
      const nullOnEmpty = json.schemas.some((s) => SchemaAST.isNull(SchemaAST.toEncoded(s.ast)))
      const errorSchemas = new Set<Schema.Top>(endpoint.error)
      for (const middleware of endpoint.middlewares) {
        for (const schema of (middleware as unknown as { readonly error: ReadonlyArray<Schema.Top> }).error) {
          errorSchemas.add(Schema.toCodecJson(schema))
        }
      }
      const encodeError = Schema.encodeUnknownEffect(
        Schema.Union([...errorSchemas]),
        Context.getOrUndefined(annotations, HttpApi.ErrorParseOptions) ?? fallback
      )
      // Every error of the contract is an envelope whose code is its status (ApiError.envelope).
      const errorResponse = (error: unknown) =>
        Effect.matchEffect(encodeError(error), {
          onFailure: (schemaError) =>
            HttpServerRespondable.isRespondable(error) ? HttpServerRespondable.toResponse(error) : Effect.die(schemaError),
          onSuccess: (encoded) =>
            Effect.succeed(
              HttpServerResponse.text(JSON.stringify(encoded), {
                status: (encoded as { readonly error: { readonly code: number } }).error.code,
                contentType: jsonType
              })
            )
        })

      const payloadOf = (text: string) => {
        let input: unknown
        if (text === "") {
          input = nullOnEmpty ? null : undefined
        } else {
          try {
            input = JSON.parse(text)
          } catch {
            return SchemaErrorsLive.transform(
              new HttpApiError.HttpApiSchemaError({
                kind: "Payload",
                cause: new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" }))
              })
            )
          }
        }
        return Effect.catch(
          decode(input),
          (cause) => SchemaErrorsLive.transform(new HttpApiError.HttpApiSchemaError({ kind: "Payload", cause }))
        )
      }
      const served = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const payload = yield* Effect.flatMap(Effect.orDie(request.text), payloadOf)
        return yield* handle(payload, request)
      })
      const context = { endpoint, group }
      const route = Effect.interruptible(
        Effect.catch(
          Effect.flatMap(
            credential,
            (token) =>
              bearer(served as unknown as Effect.Effect<HttpServerResponse.HttpServerResponse, unhandled, Caller>, {
                credential: token,
                ...context
              })
          ),
          errorResponse
        ).pipe(Effect.provideService(Statement.CurrentTransformer, statementHook))
      )

      const { method, path } = endpoint
      const pathQuery = `${path}?`
      const takes = (request: HttpServerRequest.HttpServerRequest) => {
        if (request.method !== method) return false
        const url = request.url
        if (url !== path && !url.startsWith(pathQuery)) return false
        const type = request.headers["content-type"]
        return type === undefined || mediaType(type) === jsonType
      }
      return (app: Effect.Effect<HttpServerResponse.HttpServerResponse, unhandled>) =>
        Effect.withFiber((fiber) => {
          const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
          if (!takes(request)) return app
          // The router names the route on a sampled server span; so does this.
          if (fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer) {
            const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
            if (span !== undefined && span._tag === "Span" && span.sampled) span.attribute("http.route", path)
          }
          return route as unknown as Effect.Effect<HttpServerResponse.HttpServerResponse, unhandled>
        })
    }),
    { global: true }
  )

const jsonType = "application/json"

// A content type without its parameters, as HttpApiBuilder compares it.
const mediaType = (contentType: string) => {
  const normalized = contentType.toLowerCase().trim()
  const index = normalized.indexOf(";")
  return index === -1 ? normalized : normalized.slice(0, index).trim()
}
