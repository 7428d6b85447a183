import { Api } from "@switchyard/core/api/Api"
import { Caller } from "@switchyard/core/api/Authorization"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import * as ModelListing from "@switchyard/core/catalog/ModelListing"
import { NotFound } from "@switchyard/core/schema/ApiError"
import { endpointId } from "@switchyard/core/routing/Candidates"
import * as Filters from "@switchyard/core/routing/Filters"
import type { ModelObject } from "@switchyard/core/schema/Models"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import * as WorkspaceProviders from "../catalog/WorkspaceProviders.ts"
import { routingOf, Workspaces } from "../pipeline/Workspaces.ts"
import * as StoreFailure from "../http/StoreFailure.ts"

// A page of the listing at `path`, its next link keeping the modality filter.
const page = (path: string, query: { readonly limit?: number; readonly offset?: number; readonly output_modalities?: string }) => ({
  tasks: ModelListing.tasksOf(query.output_modalities),
  path: query.output_modalities === undefined ? path : `${path}?output_modalities=${encodeURIComponent(query.output_modalities)}`,
  ...(query.limit !== undefined ? { limit: query.limit } : {}),
  ...(query.offset !== undefined ? { offset: query.offset } : {})
})

/**
 * `GET /models` and its relatives: the models the active providers serve. The public ones show
 * what the gateway's own credentials activate; `GET /models/user` shows a key's workspace's view.
 */
export const ModelsHandlers = HttpApiBuilder.group(
  Api,
  "models",
  Effect.fn(function*(handlers) {
    const loaded = yield* CurrentCatalog
    const byok = yield* ByokStore
    const workspaces = yield* Workspaces
    const activeFor = WorkspaceProviders.activeFor(loaded, byok)
    const isActive = (provider: Catalog.Provider) => loaded.active.has(provider.slug)

    // One model, as `openai.models.retrieve` reads it: the listing's record and OpenAI's fields.
    const one = (id: string) => {
      const found = ModelListing.find(loaded.catalog, id, { isActive })
      return found === undefined
        ? Effect.fail(new NotFound({ message: `No model ${JSON.stringify(id)} is served here`, metadata: { model: id } }))
        : Effect.succeed({ ...found, object: "model", owned_by: found.id.split("/")[0]! } satisfies ModelObject)
    }

    return handlers
      .handle("list", ({ query }) =>
        Effect.succeed(ModelListing.list(loaded.catalog, { isActive, ...page("/api/v1/models", query) })))
      .handle("count", ({ query }) =>
        Effect.succeed({
          data: {
            count: ModelListing.list(loaded.catalog, { isActive, tasks: ModelListing.tasksOf(query.output_modalities) }).total_count
          }
        }))
      .handle("listForUser", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* Caller
          const workspace = routingOf(loaded.catalog, yield* workspaces.settingsOf(caller.workspaceId))
          const active = new Set<string>()
          for (const provider of loaded.catalog.providers) {
            if (yield* activeFor(caller.workspaceId, provider)) active.add(provider.slug)
          }
          return ModelListing.list(loaded.catalog, {
            isActive: (provider, endpoint) =>
              active.has(provider.slug) &&
              Filters.allowedByWorkspace(workspace, { id: endpointId(provider, endpoint), provider, endpoint }),
            ...page("/api/v1/models/user", query)
          })
        })))
      .handle("get", ({ params }) => one(params.id))
      .handle("getByPath", ({ params }) => one(`${params.author}/${params.slug}`))
      .handle("getModel", ({ params }) => Effect.map(one(`${params.author}/${params.slug}`), (data) => ({ data })))
  })
)
