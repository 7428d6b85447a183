import { Api } from "@switchyard/core/api/Api"
import { Effect } from "effect"
import { FindMyWay, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApi } from "effect/http-api"
import { envelopeFor } from "./Policies.ts"

/**
 * The methods of every path of the API, from its definition: a path the router knows under other
 * methods than the one asked.
 */
const knownMethods = (): FindMyWay.Router<ReadonlyArray<string>> => {
  const byPath = new Map<string, Set<string>>()
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const methods = byPath.get(endpoint.path) ?? new Set<string>()
      methods.add(endpoint.method)
      if (endpoint.method === "GET") methods.add("HEAD")
      byPath.set(endpoint.path, methods)
    }
  })
  const router = FindMyWay.make<ReadonlyArray<string>>()
  for (const [path, methods] of byPath) router.all(path as FindMyWay.PathInput, [...methods].sort())
  return router
}

const isRouteNotFound = (error: unknown) => HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound"

/**
 * A known path asked with a method it does not take answers 405 with `Allow` (in the error
 * envelope), not the 404 of a path that does not exist.
 */
export const layer = HttpRouter.middleware(
  Effect.sync(() => {
    const known = knownMethods()
    return (app) =>
      Effect.catch(app, (error) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const allowed = isRouteNotFound(error) ? known.find(request.method, request.url)?.handler : undefined
          if (allowed === undefined || allowed.includes(request.method)) return yield* Effect.fail(error)
          return envelopeFor(request.url, 405, `Method ${request.method} is not allowed here; use ${allowed.join(", ")}`).pipe(
            HttpServerResponse.setHeader("allow", allowed.join(", "))
          )
        }))
  }),
  { global: true }
)
