/**
 * Word that a key, a workspace or embeddings cache entries changed, for what this process keeps
 * of them in memory (key facts, leases, cached vectors): a writer says it once, every listener of this process hears it at once, and on
 * PostgreSQL every other replica sharing the database hears it through `LISTEN/NOTIFY` within
 * milliseconds. Listeners also keep their entries at most one second, so a notification lost
 * (a replica reconnecting) still reaches them within that bound.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Queue, Schedule } from "effect"

/**
 * What changed: a key (by id), a workspace's budgets, credits or settings, or embeddings cache
 * entries (by cache key: a `refresh` wrote them anew).
 */
export type Change =
  | { readonly _tag: "Key"; readonly keyId: string }
  | { readonly _tag: "Workspace"; readonly workspaceId: string }
  | { readonly _tag: "CacheEntries"; readonly keys: ReadonlyArray<string> }

const channel = "switchyard_changes"

/** The most a notification's payload carries: PostgreSQL refuses payloads of 8000 bytes and more. */
export const maxPayloadBytes = 7_900

/**
 * The payloads of a change: one, but for cache entries, whose keys go in as few payloads of at
 * most {@link maxPayloadBytes} as they fit (a key is ASCII: one byte a character).
 */
export const encode = (change: Change): ReadonlyArray<string> => {
  if (change._tag === "Key") return [`k:${change.keyId}`]
  if (change._tag === "Workspace") return [`w:${change.workspaceId}`]
  const payloads: Array<string> = []
  let payload = ""
  for (const key of change.keys) {
    if (payload !== "" && payload.length + 1 + key.length > maxPayloadBytes) {
      payloads.push(payload)
      payload = ""
    }
    payload = payload === "" ? `c:${key}` : `${payload},${key}`
  }
  if (payload !== "") payloads.push(payload)
  return payloads
}

export const decode = (payload: string): Change | undefined =>
  payload.startsWith("k:")
    ? { _tag: "Key", keyId: payload.slice(2) }
    : payload.startsWith("w:")
    ? { _tag: "Workspace", workspaceId: payload.slice(2) }
    : payload.startsWith("c:")
    ? { _tag: "CacheEntries", keys: payload.slice(2).split(",") }
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
              ? Effect.forEach(encode(change), (payload) => pg.value.notify(channel, payload), { discard: true }).pipe(
                Effect.catchCause((cause) => Effect.logWarning("store changes: could not notify the other replicas", cause))
              )
              : Effect.void
          ),
        listen: (listener) => Effect.sync(() => void listeners.push(listener))
      })
    })
  )
}
