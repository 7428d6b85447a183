/**
 * The store (PGlite or PostgreSQL) failed or did not answer: a typed failure that travels from the
 * repositories up to the edge, where it becomes a 503 in the API's envelope with `Retry-After`.
 *
 * **When to use**
 *
 * A repository maps its `SqlError` (a lost connection, a refused statement, a time-out) to this
 * with {@link fromSqlError}; nothing between the repository and the edge handles it, so a database
 * outage is never an untyped defect or a 500.
 *
 * @since 0.3.0
 */
import { Data, Effect } from "effect"

/**
 * @since 0.3.0
 */
export class StoreUnavailable extends Data.TaggedError("StoreUnavailable")<{
  /** What the store was asked to do (`"keys.lookup"`, `"ledger.flush"`...), for the log line. */
  readonly operation: string
  readonly cause: unknown
}> {}

/**
 * Seconds a client should wait before it tries again, as the 503's `Retry-After` says.
 *
 * @since 0.3.0
 */
export const retryAfterSeconds = 1

/**
 * Turns a store effect's `SqlError` into `StoreUnavailable`, naming the operation.
 *
 * @since 0.3.0
 */
export const fromSqlError = (operation: string) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, { readonly _tag: "SqlError" }> | StoreUnavailable, R> =>
  Effect.catchIf(
    self,
    (e): e is Extract<E, { readonly _tag: "SqlError" }> => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "SqlError",
    (cause) => Effect.fail(new StoreUnavailable({ operation, cause }))
  ) as Effect.Effect<A, Exclude<E, { readonly _tag: "SqlError" }> | StoreUnavailable, R>
