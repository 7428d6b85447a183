import { Api } from "@switchyard/core/api/Api"
import { FindMyWay } from "effect/http"
import { HttpApi } from "effect/http-api"

/**
 * The route template a request matched (`/api/v1/keys/:hash`), for log lines and metric labels:
 * the templates are few, while paths carry ids. Every operation of the API contract is known, plus
 * the paths outside it that the listener serves; anything else is `unmatched`.
 */
export interface RouteTemplates {
  readonly of: (method: string, url: string) => string
}

const unmatched = "unmatched"

// Served at the listener's root, outside the API contract.
const rootPaths: ReadonlyArray<readonly [string, `/${string}`]> = [
  ["GET", "/metrics"],
  ["GET", "/livez"],
  ["GET", "/api/v1/openapi.json"],
  ["GET", "/ui"],
  ["GET", "/ui/*"]
]

export const make = (): RouteTemplates => {
  const router = FindMyWay.make<string>()
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => router.on(endpoint.method, endpoint.path as `/${string}`, endpoint.path)
  })
  for (const [method, path] of rootPaths) router.on(method, path, path)
  return {
    of: (method, url) =>
      (router.find(method, url) ?? (method === "HEAD" ? router.find("GET", url) : undefined))?.handler ?? unmatched
  }
}
