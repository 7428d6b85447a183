/**
 * The two lines of a graceful stop: when SIGTERM or SIGINT arrives (with the requests in flight,
 * which the server lets finish), and when everything is closed (with how long it took). A stop
 * that no signal asked for (a failed start) writes neither. The signal also starts the drain
 * (ServedRequests.ts, Drain.ts).
 */
import { Clock, Effect, Layer } from "effect"
import { ServedRequests } from "../http/ServedRequests.ts"

const signals = ["SIGTERM", "SIGINT"] as const

export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const served = yield* ServedRequests
  const context = yield* Effect.context<never>()
  let since: number | undefined
  // Node calls the runtime's own listener (NodeRuntime.runMain: interrupt the main fiber) first;
  // this one only writes the line, synchronously, before the server closes.
  const listener = (signal: NodeJS.Signals) => {
    if (since !== undefined) return
    since = Effect.runSyncWith(context)(Clock.currentTimeMillis)
    // Readiness fails at once and kept-alive connections close between requests (Drain.ts).
    served.drain()
    const n = served.inFlight()
    Effect.runSyncWith(context)(Effect.logInfo(
      `Switchyard is shutting down (${signal}): ${n} ${n === 1 ? "request" : "requests"} in flight, which may finish; new connections are refused and kept-alive ones close after their answer`
    ))
  }
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      for (const signal of signals) process.on(signal, listener)
    }),
    () =>
      Effect.gen(function*() {
        for (const signal of signals) process.off(signal, listener)
        if (since === undefined) return
        const took = (yield* Clock.currentTimeMillis) - since
        yield* Effect.logInfo(`Switchyard stopped: shutdown took ${(took / 1000).toFixed(1)} s`)
      })
  )
}))
