import { Cache, Context, Duration, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Workspace ids to names. The catalog's workspace settings are keyed by name; both are immutable
 * once created, so a name found is kept for the life of the process (an unknown id is asked again).
 */
export class Workspaces extends Context.Service<Workspaces, {
  readonly slugOf: (workspaceId: string) => Effect.Effect<string>
}>()("@switchyard/server/embeddings/Workspaces") {
  static readonly layer = Layer.effect(
    Workspaces,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const slugs = yield* Cache.makeWith(
        (workspaceId: string) =>
          sql<{ slug: string }>`SELECT slug FROM workspaces WHERE id = ${workspaceId}`.pipe(
            Effect.orDie,
            Effect.map((rows) => rows[0]?.slug ?? "")
          ),
        {
          capacity: 10_000,
          timeToLive: (exit) => Exit.isSuccess(exit) && exit.value !== "" ? Duration.infinity : Duration.zero
        }
      )
      return Workspaces.of({ slugOf: (workspaceId) => Cache.get(slugs, workspaceId) })
    })
  )
}
