import { Context, Effect, Layer } from "effect"

/**
 * Requests on their way to a ledger row: begun (admission) and not yet settled. The ledger batch
 * lingers while some of them have not written their row yet, so that under load one statement
 * carries the rows of many requests, and a lone request never waits.
 */
export class InFlight extends Context.Service<InFlight, {
  /** Runs `self` counted as `requests` (default one) requests that will each write a ledger row. */
  readonly track: <A, E, R>(self: Effect.Effect<A, E, R>, requests?: number) => Effect.Effect<A, E, R>
  readonly count: () => number
}>()("@switchyard/server/store/InFlight") {
  static readonly layer = Layer.sync(InFlight, () => {
    let count = 0
    return InFlight.of({
      track: (self, requests = 1) =>
        Effect.acquireUseRelease(
          Effect.sync(() => {
            count += requests
          }),
          () => self,
          () =>
            Effect.sync(() => {
              count -= requests
            })
        ),
      count: () => count
    })
  })
}
