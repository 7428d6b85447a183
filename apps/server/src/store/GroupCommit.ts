/**
 * Group commit of accounting operations: the reservations, settlements, records and releases that arrive
 * while a statement runs share the next statement (`switchyard_batch`).
 *
 * **Details**
 *
 * A fixed number of worker fibers each take whatever is queued (up to `maxBatch`) and run it:
 * one operation as its own function call, several as one batch. Each caller resumes with its own
 * result once the statement that carried it committed. When a batch fails as a whole (a
 * deadlock, a lost connection, an operation that raised), its operations are run again one per
 * statement, so only the faulty one fails; that is safe because a reservation's hold id is
 * fresh and settlement is idempotent on the generation id.
 *
 * **Gotchas**
 *
 * - A caller interrupted while its reservation is queued or running does not learn of its hold:
 *   when that reservation succeeds, the hold is released at once.
 */
import { Deferred, Effect, Exit, Queue } from "effect"
import type { Scope } from "effect"
import type { SqlClient } from "effect/sql"
import type * as SqlError from "effect/sql/SqlError"
import * as PgliteDurability from "./PgliteDurability.ts"

/** The ledger row a settle or a record writes, as `switchyard_batch` reads it. */
export interface LedgerRow {
  readonly key: string
  readonly workspace: string
  readonly generation: string
  readonly model: string
  readonly provider: string
  readonly prompt_tokens: number
  readonly total_tokens: number
  readonly byok: boolean
  readonly now: string
  readonly latency_ms?: number | null
  readonly cached_items?: number
  readonly cached_tokens?: number
}

/** One operation, as `switchyard_batch` reads it (money and times as strings). */
export type BatchOp =
  | {
    readonly op: "reserve"
    readonly id: string
    readonly owner: string | null
    readonly key: string
    readonly workspace: string
    readonly amount: string
    readonly byok: boolean
    readonly now: string
    readonly expires: string
  }
  | LedgerRow & { readonly op: "settle"; readonly id: string; readonly cost: string }
  | LedgerRow & { readonly op: "record" }
  | { readonly op: "release"; readonly id: string }

interface Pending {
  readonly op: BatchOp
  readonly done: Deferred.Deferred<Record<string, unknown>, SqlError.SqlError>
  abandoned: boolean
}

export interface GroupCommitOptions {
  /** Batches in flight at once (on PGlite one runs while the others wait for the disk or the connection). */
  readonly workers: number
  /** The most operations in one statement. */
  readonly maxBatch: number
}

/**
 * The queue and its workers, for as long as the scope is open. `run(single, op)` resolves with
 * the operation's result row; `single` is the one-operation statement for `op`.
 */
export const make = (
  sql: SqlClient.SqlClient,
  single: (op: BatchOp) => Effect.Effect<Record<string, unknown>, SqlError.SqlError>,
  options: GroupCommitOptions
): Effect.Effect<(op: BatchOp) => Effect.Effect<Record<string, unknown>, SqlError.SqlError>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Pending>()

    const settleOne = (pending: Pending, exit: Exit.Exit<Record<string, unknown>, SqlError.SqlError>) =>
      Effect.gen(function*() {
        yield* Deferred.done(pending.done, exit)
        if (pending.abandoned && pending.op.op === "reserve" && Exit.isSuccess(exit) && exit.value.o_outcome === "ok") {
          yield* Queue.offer(queue, { op: { op: "release", id: pending.op.id }, done: yield* Deferred.make<Record<string, unknown>, SqlError.SqlError>(), abandoned: true })
        }
      })

    const runEach = (items: ReadonlyArray<Pending>) =>
      Effect.forEach(items, (pending) => Effect.exit(single(pending.op)).pipe(Effect.flatMap((exit) => settleOne(pending, exit))), {
        discard: true
      })

    const runBatch = (items: ReadonlyArray<Pending>): Effect.Effect<void> =>
      // Only a ledger row's answer must wait for the disk (a settlement's or a record's: the row
      // is reported); a hold or a release lost with a power loss is lost with its process too.
      Effect.provideService(
        runStatement(items),
        PgliteDurability.NoDiskWait,
        items.every((p) => p.op.op !== "settle" && p.op.op !== "record")
      )

    const runStatement = (items: ReadonlyArray<Pending>): Effect.Effect<void> => {
      if (items.length === 1) return runEach(items)
      return sql<{ out: string }>`SELECT switchyard_batch(${JSON.stringify(items.map((p) => p.op))}::jsonb)::text AS out`.pipe(
        Effect.exit,
        Effect.flatMap((exit) => {
          if (Exit.isFailure(exit)) return runEach(items)
          const results = JSON.parse(exit.value[0]!.out) as Array<Record<string, unknown>>
          return Effect.forEach(items, (pending, i) => settleOne(pending, Exit.succeed(results[i]!)), { discard: true })
        })
      )
    }

    for (let i = 0; i < options.workers; i++) {
      yield* Queue.takeBetween(queue, 1, options.maxBatch).pipe(
        // A defect fails the batch's callers rather than the worker: the queue must keep moving.
        Effect.flatMap((items) =>
          runBatch(items).pipe(
            Effect.catchCause((cause) => Effect.forEach(items, (p) => Deferred.failCause(p.done, cause), { discard: true }))
          )
        ),
        Effect.forever,
        Effect.forkScoped
      )
    }

    return (op: BatchOp) =>
      Effect.gen(function*() {
        const pending: Pending = { op, done: yield* Deferred.make<Record<string, unknown>, SqlError.SqlError>(), abandoned: false }
        yield* Queue.offer(queue, pending)
        return yield* Deferred.await(pending.done).pipe(Effect.onInterrupt(() => Effect.sync(() => (pending.abandoned = true))))
      })
  })
