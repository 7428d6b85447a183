import { InternStore } from "@switchyard/core/interns/InternStore"
import { Duration, Effect, Fiber, Layer, Result } from "effect"
import { InternControl } from "./InternControl.ts"

/**
 * Reconciles every stored intern with the runtime's real state (see `InternLifecycle.reconcile`):
 * interns meant to be up whose runtime is gone are started again, strays are stopped, and
 * interrupted destructions resume.
 */
const reconcileAll = Effect.gen(function*() {
  const store = yield* InternStore
  const control = yield* InternControl
  // A store that does not answer at start-up leaves the interns as stored (said once, at error
  // level); serving goes on.
  const interns = yield* store.all.pipe(
    Effect.catchTag("StoreUnavailable", (e) =>
      Effect.as(Effect.logError("Could not read the interns to reconcile: the store did not answer", e.cause), []))
  )
  const results = yield* Effect.forEach(
    interns,
    (intern) => Effect.result(control.reconcile(intern.id)),
    { concurrency: 8 }
  )
  const counts: Record<string, number> = {}
  for (const [i, result] of results.entries()) {
    if (Result.isFailure(result)) {
      const reason = result.failure._tag === "StoreUnavailable" ? "the store did not answer" : result.failure.message
      yield* Effect.logWarning(`Could not reconcile intern ${interns[i]!.id}: ${reason}`)
      counts.unreachable = (counts.unreachable ?? 0) + 1
    } else {
      counts[result.success] = (counts[result.success] ?? 0) + 1
    }
  }
  if (interns.length > 0) yield* Effect.logInfo("Interns reconciled with their runtime", counts)
})

/**
 * Runs {@link reconcileAll} at start-up, waiting for it up to `budget` before serving; the rest
 * continues in the background.
 */
export const layer = (budget: Duration.Input = Duration.seconds(10)) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const fiber = yield* Effect.forkScoped(reconcileAll)
    yield* Fiber.await(fiber).pipe(Effect.timeoutOption(budget))
  }))
