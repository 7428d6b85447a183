import { Context, Effect, Layer } from "effect"

/**
 * Requests on their way to a ledger row: begun (admission) and not yet settled. The ledger batch
 * lingers while some of them have not written their row yet, so that under load one statement
 * carries the rows of many requests, and a lone request never waits.
 */
export class InFlight extends Context.Service<InFlight, {
  /** Runs `self` counted as one request that will write a ledger row. */
  readonly track: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly count: () => number
}>()("@switchyard/server/store/InFlight") {
  static readonly layer = Layer.sync(InFlight, () => {
    let count = 0
    return InFlight.of({
      track: (self) =>
        Effect.acquireUseRelease(
          Effect.sync(() => void count++),
          () => self,
          () => Effect.sync(() => void count--)
        ),
      count: () => count
    })
  })
}
