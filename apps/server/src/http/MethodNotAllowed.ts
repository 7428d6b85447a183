import { Api } from "@switchyard/core/api/Api"
import { Effect } from "effect"
import { FindMyWay, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApi } from "effect/http-api"
import { envelopeFor } from "./Policies.ts"

/**
 * The methods of every path of the API, from its definition (a path the router knows under other
 * methods than the one asked), and every method any route serves.
 */
const knownMethods = (): { readonly byPath: FindMyWay.Router<ReadonlyArray<string>>; readonly served: ReadonlySet<string> } => {
  const byPath = new Map<string, Set<string>>()
  // The routes outside the API (`/metrics`, `/ui/`) and the console's sign-in take these.
  const served = new Set(["GET", "HEAD", "POST"])
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const methods = byPath.get(endpoint.path) ?? new Set<string>()
      methods.add(endpoint.method)
      if (endpoint.method === "GET") methods.add("HEAD")
      byPath.set(endpoint.path, methods)
      served.add(endpoint.method)
    }
  })
  const router = FindMyWay.make<ReadonlyArray<string>>()
  for (const [path, methods] of byPath) router.all(path as FindMyWay.PathInput, [...methods].sort())
  return { byPath: router, served }
}

const isRouteNotFound = (error: unknown) => HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound"

/**
 * A known path asked with a method it does not take answers 405 with `Allow` (in the error
 * envelope), not the 404 of a path that does not exist; so does any path asked with a method no
 * route of the gateway serves (`TRACE`, `OPTIONS`, `PROPFIND`...), its `Allow` empty when the path
 * is unknown. (`CONNECT` never reaches a route: ClientErrors.ts answers it.)
 */
export const layer = HttpRouter.middleware(
  Effect.sync(() => {
    const known = knownMethods()
    return (app) =>
      Effect.catch(app, (error) =>
        Effect.gen(function*() {
          if (!isRouteNotFound(error)) return yield* Effect.fail(error)
          const request = yield* HttpServerRequest.HttpServerRequest
          const allowed = known.byPath.find(request.method, request.url)?.handler
          if (allowed === undefined && known.served.has(request.method)) return yield* Effect.fail(error)
          if (allowed?.includes(request.method)) return yield* Effect.fail(error)
          const allow = (allowed ?? []).join(", ")
          const message = allowed === undefined
            ? `Method ${request.method} is not served by this gateway`
            : `Method ${request.method} is not allowed here; use ${allow}`
          return envelopeFor(request.url, 405, message).pipe(HttpServerResponse.setHeader("allow", allow))
        }))
  }),
  { global: true }
)
