/**
 * Word that a key or a workspace changed, for what this process keeps of them in memory (key
 * facts, leases): a writer says it once, every listener of this process hears it at once, and on
 * PostgreSQL every other replica sharing the database hears it through `LISTEN/NOTIFY` within
 * milliseconds. Listeners also keep their entries at most one second, so a notification lost
 * (a replica reconnecting) still reaches them within that bound.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Queue, Schedule } from "effect"

/** What changed: a key (by id), or a workspace's budgets, credits or settings. */
export type Change =
  | { readonly _tag: "Key"; readonly keyId: string }
  | { readonly _tag: "Workspace"; readonly workspaceId: string }

const channel = "switchyard_changes"

const encode = (change: Change): string => (change._tag === "Key" ? `k:${change.keyId}` : `w:${change.workspaceId}`)
const decode = (payload: string): Change | undefined =>
  payload.startsWith("k:")
    ? { _tag: "Key", keyId: payload.slice(2) }
    : payload.startsWith("w:")
    ? { _tag: "Workspace", workspaceId: payload.slice(2) }
    : undefined

export class StoreChanges extends Context.Service<StoreChanges, {
  /** Tells this process's listeners at once, and the other replicas' soon after. */
  readonly changed: (change: Change) => Effect.Effect<void>
  /** Registers a listener for as long as the process lives. */
  readonly listen: (listener: (change: Change) => Effect.Effect<void>) => Effect.Effect<void>
}>()("@switchyard/server/store/StoreChanges") {
  static readonly layer = Layer.effect(
    StoreChanges,
    Effect.gen(function*() {
      const listeners: Array<(change: Change) => Effect.Effect<void>> = []
      const tell = (change: Change) => Effect.forEach(listeners, (listener) => listener(change), { discard: true })
      const pg = yield* Effect.serviceOption(PgClient.PgClient)
      if (Option.isSome(pg)) {
        const client = pg.value
        // A lost connection ends the listener; it listens again a second later.
        yield* Effect.scoped(Effect.gen(function*() {
          const notifications = yield* client.listen(channel)
          return yield* Queue.take(notifications).pipe(
            Effect.flatMap((n) => {
              const change = decode(n.payload)
              return change === undefined ? Effect.void : tell(change)
            }),
            Effect.forever
          )
        })).pipe(
          Effect.catchCause((cause) => Effect.logDebug("store changes: listener ended", cause)),
          Effect.repeat(Schedule.spaced("1 second")),
          Effect.forkScoped
        )
      }
      return StoreChanges.of({
        changed: (change) =>
          Effect.andThen(
            tell(change),
            Option.isSome(pg)
              ? pg.value.notify(channel, encode(change)).pipe(
                Effect.catchCause((cause) => Effect.logWarning("store changes: could not notify the other replicas", cause))
              )
              : Effect.void
          ),
        listen: (listener) => Effect.sync(() => void listeners.push(listener))
      })
    })
  )
}
