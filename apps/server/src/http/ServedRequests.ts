import { Context, Effect, Latch, Layer } from "effect"

/**
 * The requests the listening server has taken. They wait until the gateway is ready to answer
 * them as it will for good: the socket opens before the first-start keys are made (a start that
 * fails to listen must leave no keys behind whose secrets it printed), and a request that came in
 * between would otherwise be refused with 401 for a key made a moment later. Those in flight are
 * counted, for the shutdown line. Once a stop is asked for (SIGTERM, SIGINT) the process is
 * draining: `/health` answers 503 and every answer closes its connection (Drain.ts).
 */
export class ServedRequests extends Context.Service<ServedRequests, {
  /** Runs `app` for one request: once the gateway is ready, counted while it runs. */
  readonly serve: <A, E, R>(app: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Lets every held and later request through. */
  readonly ready: Effect.Effect<void>
  readonly inFlight: () => number
  /** Marks the process as stopping, and runs what waits for it (closing idle connections). */
  readonly drain: () => void
  readonly draining: () => boolean
  /** Runs `f` when the process starts draining (at once if it already is). */
  readonly onDrain: (f: () => void) => void
}>()("@switchyard/server/http/ServedRequests") {
  static readonly layer = Layer.sync(ServedRequests, () => {
    const gate = Latch.makeUnsafe(false)
    let inFlight = 0
    let draining = false
    const listeners: Array<() => void> = []
    const done = Effect.sync(() => void inFlight--)
    return ServedRequests.of({
      serve: (app) =>
        Effect.suspend(() => {
          inFlight++
          return Effect.ensuring(Latch.isOpen(gate) ? app : gate.whenOpen(app), done)
        }),
      ready: Effect.asVoid(gate.open),
      inFlight: () => inFlight,
      drain: () => {
        if (draining) return
        draining = true
        for (const f of listeners) f()
      },
      draining: () => draining,
      onDrain: (f) => {
        if (draining) f()
        else listeners.push(f)
      }
    })
  })
}
