import { Api } from "@switchyard/core/api/Api"
import * as ModelListing from "@switchyard/core/catalog/ModelListing"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"

/**
 * `GET /models`: the models the active providers serve, a page at a time.
 */
export const ModelsHandlers = HttpApiBuilder.group(
  Api,
  "models",
  Effect.fn(function*(handlers) {
    const loaded = yield* CurrentCatalog
    return handlers.handle("list", ({ query }) =>
      Effect.succeed(
        ModelListing.list(loaded.catalog, {
          isActive: (p) => loaded.active.has(p.slug),
          path: "/api/v1/models",
          ...(query.limit !== undefined ? { limit: query.limit } : {}),
          ...(query.offset !== undefined ? { offset: query.offset } : {})
        })
      ))
  })
)
