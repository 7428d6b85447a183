/**
 * The edge of a store failure: `StoreUnavailable` becomes a 503 in the API's envelope
 * (`reason: "store_unavailable"`), the request's facts keep its cause, and the access log writes it
 * once, at error level, with that cause; the answer gets `Retry-After`.
 */
import type { ServiceUnavailable } from "@switchyard/core/schema/ApiError"
import { storeToApiError } from "@switchyard/core/errors/EmbeddingsError"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Effect } from "effect"
import * as RequestFacts from "../instrumentation/RequestFacts.ts"

const isStoreUnavailable = (error: unknown): error is StoreUnavailable =>
  typeof error === "object" && error !== null && (error as { readonly _tag?: unknown })._tag === "StoreUnavailable"

/** Notes a store failure on the request (for a route that maps its own errors). */
export const note = (error: unknown): Effect.Effect<void> =>
  isStoreUnavailable(error)
    ? RequestFacts.note({ store_unavailable: { operation: error.operation, cause: error.cause } })
    : Effect.void

/** A handler's store failure as the 503 `toError` builds (in the envelope of its API). */
export const answerAs = <F>(toError: (error: StoreUnavailable) => F) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, StoreUnavailable> | F, R> =>
  Effect.catchIf(self, isStoreUnavailable, (error) => Effect.andThen(note(error), Effect.fail(toError(error as StoreUnavailable)))) as Effect.Effect<
    A,
    Exclude<E, StoreUnavailable> | F,
    R
  >

/** A handler's store failure as its 503. */
export const answer: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, Exclude<E, StoreUnavailable> | ServiceUnavailable, R> =
  answerAs(storeToApiError)
