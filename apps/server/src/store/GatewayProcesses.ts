import { fromSqlError, type StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
/**
 * Which gateway processes are alive, so that the holds of one that died are released within
 * seconds instead of after their ten-minute lifetime.
 *
 * **Details**
 *
 * Every gateway process picks a random id, and every hold it takes carries that id as its
 * `owner`. On PostgreSQL (several processes may share the store) the process registers in
 * `gateway_processes` and refreshes its `seen_at` every ten seconds; at start and on every
 * heartbeat it deletes the holds whose owner has not been seen for more than thirty seconds,
 * and those processes' rows. Times are the database's clock, so processes whose clocks disagree
 * still agree on who is stale. On PGlite the store belongs to one process by construction, so
 * every hold found at start is a dead process's and is deleted then.
 *
 * On a clean shutdown the process deletes its own holds and its row.
 *
 * **Gotchas**
 *
 * - A live process that cannot reach PostgreSQL (or is frozen) for more than thirty seconds
 *   loses its holds. Its spend leases stop being valid by its own clock before that, and a ledger
 *   row settled against a lease that was swept is not written (the lease's fencing token, see
 *   `AccountingRepo`): the request is answered 503 and not charged.
 * - A spend-lease grant also refreshes the process's `seen_at` (`switchyard_lease`).
 * - Holds without an owner (taken before the owner column existed, or through
 *   `AccountingRepo.make()` without one) are left to their expiry.
 */
import { Duration, Effect, Schedule } from "effect"
import type { Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"

export interface GatewayProcessOptions {
  /** How often the process says it is alive; default ten seconds. */
  readonly heartbeat?: Duration.Input
  /** How long unseen before a process counts as dead; default thirty seconds. */
  readonly staleAfter?: Duration.Input
}

export const defaultHeartbeat = Duration.seconds(10)
export const defaultStaleAfter = Duration.seconds(30)

/**
 * Deletes the holds of every owner not seen within `staleAfter` (and, besides `self`, their
 * process rows); returns how many holds. `SKIP LOCKED`: a hold being settled right now is left
 * to that settlement, and the sweep never waits on a reservation's locks.
 */
export const sweepDead = (sql: SqlClient.SqlClient, self: string, staleAfter: Duration.Input = defaultStaleAfter) =>
  Effect.gen(function*() {
    const seconds = Duration.toMillis(Duration.fromInputUnsafe(staleAfter)) / 1000
    // The rows go first: once a dead process's holds are gone, so is its row (the holds of an
    // owner without a row are swept all the same).
    yield* sql`DELETE FROM gateway_processes
      WHERE id <> ${self} AND seen_at < now() - make_interval(secs => ${seconds}::double precision)`
    const holds = yield* sql<{ id: string }>`DELETE FROM holds WHERE id IN (
        SELECT h.id FROM holds h
        WHERE h.owner IS NOT NULL AND h.owner <> ${self} AND NOT EXISTS (
          SELECT 1 FROM gateway_processes p
          WHERE p.id = h.owner AND p.seen_at >= now() - make_interval(secs => ${seconds}::double precision))
        FOR UPDATE SKIP LOCKED)
      RETURNING id`
    return holds.length
  })

/**
 * Registers this process for as long as the scope is open and returns its id, the `owner` to
 * put on its holds: heartbeats and sweeps of dead processes run in a fiber of the scope, and
 * closing the scope deletes the process's own holds and row.
 */
export const register = (
  options: GatewayProcessOptions = {}
): Effect.Effect<string, StoreUnavailable, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = Crypto.randomUUID()
    const staleAfter = options.staleAfter ?? defaultStaleAfter
    yield* Effect.addFinalizer(() =>
      Effect.all([
        sql`DELETE FROM holds WHERE owner = ${id}`,
        sql`DELETE FROM gateway_processes WHERE id = ${id}`
      ], { discard: true }).pipe(Effect.ignore({ log: "Warn", message: "could not release this process's holds" }))
    )
    if (sql.driver === "pglite") {
      yield* sql`DELETE FROM holds WHERE owner IS DISTINCT FROM ${id}`.pipe(fromSqlError("gateway_processes"))
      // Rows a lease grant left for a process that is gone (grants refresh their owner's row).
      yield* sql`DELETE FROM gateway_processes WHERE id <> ${id}`.pipe(fromSqlError("gateway_processes"))
      return id
    }
    const heartbeat = sql`INSERT INTO gateway_processes (id, started_at, seen_at) VALUES (${id}, now(), now())
      ON CONFLICT (id) DO UPDATE SET seen_at = now()`
    yield* heartbeat.pipe(fromSqlError("gateway_processes"))
    yield* sweepDead(sql, id, staleAfter).pipe(fromSqlError("gateway_processes"))
    yield* Effect.andThen(heartbeat, sweepDead(sql, id, staleAfter)).pipe(
      Effect.ignore({ log: "Warn", message: "gateway process heartbeat failed" }),
      Effect.repeat(Schedule.spaced(options.heartbeat ?? defaultHeartbeat)),
      Effect.forkScoped
    )
    return id
  })
