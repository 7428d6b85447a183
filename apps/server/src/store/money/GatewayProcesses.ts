import { fromSqlError, type StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
/**
 * Which gateway processes are alive, so that the holds of one that died are released within
 * seconds instead of after their ten-minute lifetime.
 *
 * **Details**
 *
 * Every gateway process picks a random id, and every hold it takes carries that id as its
 * `owner`. Where several processes may share the store (replicas on PostgreSQL, worker processes
 * on one SQLite file) the process registers in `gateway_processes` and refreshes its `seen_at`
 * every ten seconds; at start and on every heartbeat it deletes the holds whose owner has not
 * been seen for more than thirty seconds, and those processes' rows (`MoneyStore.processes`).
 * Where the store belongs to one process (`sole`: the embedded store with one worker), every
 * hold found at start is a dead process's and is deleted then.
 *
 * On a clean shutdown the process deletes its own holds and its row.
 *
 * **Gotchas**
 *
 * - A live process that cannot reach PostgreSQL (or is frozen) for more than thirty seconds
 *   loses its holds. Its spend leases stop being valid by its own clock before that, and a ledger
 *   row answered under a lease that was swept (another fencing token, see `AccountingLive`) is
 *   settled under the key's current room, as core's `FencedLease.settlesMoved` says: written and
 *   charged when every limit allows it, refused (503, not charged) only when it would overshoot one.
 * - A heartbeat reads the time when it runs, and `seen_at` only moves forward on both stores: a
 *   process that heartbeats is never judged dead, however long it grants nothing.
 * - A spend-lease grant also refreshes the process's `seen_at` (`switchyard_lease`).
 * - Holds without an owner (taken before the owner column existed, or through
 *   `AccountingLive.make()` without one) are left to their expiry.
 */
import { Context, Duration, Effect, Schedule } from "effect"
import type { Scope } from "effect"
import * as Crypto from "node:crypto"
import type { MoneyStore } from "./MoneyStorePort.ts"

export interface GatewayProcessOptions {
  /** How often the process says it is alive; default ten seconds. */
  readonly heartbeat?: Duration.Input
  /** How long unseen before a process counts as dead; default thirty seconds. */
  readonly staleAfter?: Duration.Input
  /**
   * The store belongs to this process alone (the embedded store with one worker): every hold
   * found at start was left by a process that is gone, and is deleted then.
   */
  readonly sole?: boolean
}

/**
 * This gateway process as the store knows it: its id, the owner of its holds and of the batch
 * units it claims, and how long unseen before another process counts as dead. `sole`: the store
 * is this process's alone (no heartbeat runs; every other owner found is a dead process's).
 */
export class GatewayProcess extends Context.Service<GatewayProcess, {
  readonly id: string
  readonly staleAfter: Duration.Duration
  readonly sole: boolean
}>()("switchyard/store/GatewayProcess") {}

const defaultHeartbeat = Duration.seconds(10)
export const defaultStaleAfter = Duration.seconds(30)

/**
 * Registers this process for as long as the scope is open and returns its id, the `owner` to
 * put on its holds: heartbeats and sweeps of dead processes run in a fiber of the scope, and
 * closing the scope deletes the process's own holds and row.
 */
export const register = (
  store: MoneyStore,
  options: GatewayProcessOptions = {}
): Effect.Effect<string, StoreUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const id = Crypto.randomUUID()
    const staleAfter = Duration.fromInputUnsafe(options.staleAfter ?? defaultStaleAfter)
    yield* Effect.addFinalizer(() =>
      store.processes.end(id).pipe(Effect.ignore({ log: "Warn", message: "could not release this process's holds" }))
    )
    if (options.sole === true) {
      yield* store.processes.claim(id).pipe(fromSqlError("gateway_processes"))
      return id
    }
    const heartbeat = store.processes.heartbeat(id)
    yield* heartbeat.pipe(fromSqlError("gateway_processes"))
    yield* store.processes.sweep(id, staleAfter).pipe(fromSqlError("gateway_processes"))
    yield* Effect.andThen(heartbeat, store.processes.sweep(id, staleAfter)).pipe(
      Effect.ignore({ log: "Warn", message: "gateway process heartbeat failed" }),
      Effect.repeat(Schedule.spaced(options.heartbeat ?? defaultHeartbeat)),
      Effect.forkScoped
    )
    return id
  })
