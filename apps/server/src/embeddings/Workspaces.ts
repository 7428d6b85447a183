import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Workspace ids to names. The catalog's workspace settings are keyed by name; both are immutable
 * once created, so the mapping is cached for the life of the process.
 */
export class Workspaces extends Context.Service<Workspaces, {
  readonly slugOf: (workspaceId: string) => Effect.Effect<string>
}>()("@switchyard/server/embeddings/Workspaces") {
  static readonly layer = Layer.effect(
    Workspaces,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cache = new Map<string, string>()
      return Workspaces.of({
        slugOf: (workspaceId) => {
          const hit = cache.get(workspaceId)
          if (hit !== undefined) return Effect.succeed(hit)
          return sql<{ slug: string }>`SELECT slug FROM workspaces WHERE id = ${workspaceId}`.pipe(
            Effect.orDie,
            Effect.map((rows) => {
              const slug = rows[0]?.slug ?? ""
              if (slug === "") return slug
              // Bounded like the other per-request caches: cleared when full, refilled on demand.
              if (cache.size >= 10_000) cache.clear()
              cache.set(workspaceId, slug)
              return slug
            })
          )
        }
      })
    })
  )
}
