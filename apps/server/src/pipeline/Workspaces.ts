import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as Workspace from "@switchyard/core/schema/Workspace"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Cache, Context, Duration, Effect, Exit, Layer } from "effect"
import { flagOrNull } from "../store/sql/Columns.ts"
import * as WorkspaceStatements from "../store/keys/WorkspaceStatements.ts"

/**
 * What the embeddings path needs of a workspace: its name (the catalog's workspace settings are
 * keyed by it) and the cache switch a management key set (`null`: the config file decides).
 */
export interface WorkspaceSettings {
  readonly slug: string
  readonly cache: boolean | null
  /** The provider settings a management key set over the config file's (`null`: none). */
  readonly routing: Workspace.RoutingSettings | null
}

/**
 * The provider settings a workspace's requests merge with their own: the config file's
 * `workspaces.<slug>`, with what a management key set over them.
 */
export const routingOf = (catalog: Catalog.Catalog, workspace: WorkspaceSettings): Catalog.Workspace =>
  Catalog.withRouting(Catalog.workspace(catalog, workspace.slug), workspace.routing)

/**
 * Whether the embeddings cache is on for a workspace: the workspace API's switch when a
 * management key set it, else the config file's `workspaces.<slug>.cache`.
 */
export const cacheEnabled = (catalog: Catalog.Catalog, workspace: WorkspaceSettings): boolean =>
  workspace.cache ?? Catalog.workspace(catalog, workspace.slug).cache

// How long a replica keeps a workspace's settings: a change made through another replica reaches
// this one within it (a change made through this one at once, by `forget`).
const settingsTtl = Duration.seconds(5)

/**
 * Workspace ids to their settings, kept a few seconds (an unknown id is asked again at once), so
 * the embeddings path reads the store once per workspace every few seconds, not per request.
 */
export class Workspaces extends Context.Service<Workspaces, {
  readonly settingsOf: (workspaceId: string) => Effect.Effect<WorkspaceSettings, StoreUnavailable>
  /** Drops what is kept of a workspace, after it was changed. */
  readonly forget: (workspaceId: string) => Effect.Effect<void>
}>()("@switchyard/server/pipeline/Workspaces") {
  static readonly layer = Layer.effect(
    Workspaces,
    Effect.gen(function*() {
      const workspaces = yield* WorkspaceStatements.make
      const settings = yield* Cache.makeWith(
        (workspaceId: string) =>
          workspaces.settings(workspaceId).pipe(
            Effect.map((row): WorkspaceSettings => ({
              slug: row?.slug ?? "",
              cache: flagOrNull(row?.cache ?? null),
              routing: Workspace.decodeRouting(row?.routing ?? null)
            }))
          ),
        {
          capacity: 10_000,
          timeToLive: (exit) => Exit.isSuccess(exit) && exit.value.slug !== "" ? settingsTtl : Duration.zero
        }
      )
      return Workspaces.of({
        settingsOf: (workspaceId) => Cache.get(settings, workspaceId),
        forget: (workspaceId) => Cache.invalidate(settings, workspaceId)
      })
    })
  )
}
