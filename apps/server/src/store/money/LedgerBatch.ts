/**
 * Ledger rows written in batches: settled and recorded requests put their row here, and one
 * flush of the money store (`MoneyStore.flush`: one transaction, on PostgreSQL one statement)
 * writes every row waiting, with the spend counters, the workspace's usage and the leases'
 * amounts it moves. A caller resumes once the transaction carrying its row committed (on disk),
 * so an answer that reports a cost is never ahead of its row.
 *
 * **Details**
 *
 * One flush runs at a time. Rows that arrive while it runs wait for the next. Before a flush starts
 * it lingers (at most `lingerMs`) while some admitted request has not settled yet (`busy`), so
 * that under load one flush carries the rows of many requests; a lone request, with nothing else
 * in flight, waits for nothing but its own statement. A flush that fails is
 * tried again (three times, 50 ms apart). Closing the scope writes what is waiting before it returns.
 *
 * An answer iff a row: a statement that failed may still have committed (the connection broke
 * after the store received it), so once the tries are spent the batch's outcome is read back
 * before any caller resumes: under the locks the flush takes (its keys), so a flush still running
 * in the store finishes first, the generation ids are looked up in the ledger. A row found is
 * written; a row not found is not, and never will be (its statement is over), and fails with
 * `StoreUnavailable`. The read-back is tried again (100 ms, doubling to 1 s) for at most
 * `resolveWithinMs`; past that the rows fail as unknown, logged. A row whose lease was taken
 * (swept, or found with another fencing token) is not written and fails with `StoreUnavailable`.
 * Every row of a batch that saw a failure is reported `uncertain`, so the lease it moved is read
 * again from the store.
 */
import { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Clock, Context, Deferred, Duration, Effect, Latch, Schedule, Semaphore, Tracer } from "effect"
import type { Scope } from "effect"
import * as Span from "../../instrumentation/Span.ts"
import type * as MoneyStore from "./MoneyStorePort.ts"
import type { StoreStatements } from "../sql/StoreStatements.ts"

/** A ledger row, as the money store's flush writes it (money and times as strings). */
export type LedgerRow = MoneyStore.LedgerRow

/** What became of a row: written now, or found written before with this cost. */
export interface Written {
  readonly costNanos: bigint
  readonly written: boolean
}

/**
 * What became of a row's batch, for whoever keeps the lease: the row as written (`undefined`: not
 * written), and whether the batch saw a failure (the store's lease amounts may differ from what
 * the caller expects, and must be read again).
 */
export type After = (written: Written | undefined, uncertain: boolean) => void

interface Waiting {
  readonly row: LedgerRow
  readonly done: Deferred.Deferred<Written, StoreUnavailable>
  /** Runs when the row's batch ended, whoever still waits for it. */
  readonly after: After
  /** The span of the request the row belongs to, which the flush's span links to. */
  readonly span: Tracer.AnySpan | undefined
}

export interface LedgerBatchOptions {
  /** The most rows in one statement. */
  readonly maxRows: number
  /** The longest a flush waits for more rows while `busy` says more are coming. */
  readonly lingerMs: number
  /** Whether an admitted request has not settled yet (its row may join the next flush). */
  readonly busy: () => boolean
  /** How long a lease counts after a flush used it. */
  readonly leaseTtl: Duration.Duration
  /** How long a failed flush's outcome is read back for while the store does not answer; default 30 s. */
  readonly resolveWithinMs?: number
}

export interface LedgerBatch {
  /** Writes the row with the next batch; `after` runs once that batch ended, even if the caller left. */
  readonly write: (row: LedgerRow, after: After) => Effect.Effect<Written, StoreUnavailable>
  /** Runs `effect` while no batch is being written (to read a lease's row as the last flush left it). */
  readonly exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** A real-time wait: the linger is a matter of the machine's time, whatever clock the caller runs on. */
const pause = (ms: number) =>
  Effect.callback<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

export const make = (
  store: MoneyStore.MoneyStore,
  statements: StoreStatements["Service"],
  options: LedgerBatchOptions
): Effect.Effect<LedgerBatch, never, Scope.Scope> =>
  Effect.gen(function*() {
    let waiting: Array<Waiting> = []
    const wake = Latch.makeUnsafe(false)
    const writing = Semaphore.makeUnsafe(1)
    const resolveWithinMs = options.resolveWithinMs ?? 30_000

    const statement = (rows: ReadonlyArray<LedgerRow>, failed: { count: number }) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        return yield* store.flush(rows, now + Duration.toMillis(options.leaseTtl)).pipe(
          Effect.tapError(() => Effect.sync(() => failed.count++))
        )
      }).pipe(Effect.retry({ times: 3, schedule: Schedule.spaced(Duration.millis(50)) }))

    /**
     * The generation ids of `rows` found in the ledger, with their cost, read once every flush
     * holding the rows' keys has ended.
     */
    const readBack = (rows: ReadonlyArray<LedgerRow>) => store.written(rows)

    /** The read-back, tried again while the store does not answer, for at most `resolveWithinMs`. */
    const resolve = (rows: ReadonlyArray<LedgerRow>) =>
      Effect.gen(function*() {
        const deadline = Date.now() + resolveWithinMs
        for (let wait = 100;; wait = Math.min(1000, wait * 2)) {
          const exit = yield* Effect.exit(readBack(rows))
          if (exit._tag === "Success") return exit.value
          if (Date.now() + wait > deadline) {
            yield* Effect.logWarning("ledger: the outcome of a failed write could not be read back; its requests are answered 503", exit.cause)
            return undefined
          }
          yield* pause(wait)
        }
      })

    const finish = (w: Waiting, written: Written | undefined, uncertain: boolean, failure?: StoreUnavailable) => {
      w.after(written, uncertain)
      Deferred.doneUnsafe(w.done, written === undefined ? Effect.fail(failure!) : Effect.succeed(written))
    }

    // Background work under a span of its own, named for what it does and linked to the requests
    // whose rows it carries; its SQL statement is the span's child.
    const traced = (batch: ReadonlyArray<Waiting>, failed: { count: number }) =>
      statement(batch.map((w) => w.row), failed).pipe(Effect.withSpan("ledger.flush", {
        root: true,
        attributes: { "switchyard.ledger.rows": batch.length },
        links: batch.flatMap((w) => w.span === undefined ? [] : [{ span: w.span, attributes: {} }])
      }, Span.perRequest))

    const flush = (batch: ReadonlyArray<Waiting>) =>
      Effect.gen(function*() {
        statements.batchRows(batch.length)
        const failed = { count: 0 }
        const exit = yield* Effect.exit(traced(batch, failed))
        const uncertain = failed.count > 0
        if (exit._tag === "Failure") {
          const found = yield* resolve(batch.map((w) => w.row))
          for (const w of batch) {
            const cost = found?.get(w.row.generation)
            const failure = new StoreUnavailable({ operation: "ledger.flush", cause: exit.cause })
            finish(w, cost === undefined ? undefined : { costNanos: cost, written: true }, true, failure)
          }
          return
        }
        const byGeneration = new Map(exit.value.map((r) => [r.generation, r]))
        for (const w of batch) {
          const r = byGeneration.get(w.row.generation)!
          if (r.cost === null) {
            // Its lease was taken before the row could be written: no row, no charge.
            finish(w, undefined, true, new StoreUnavailable({ operation: "ledger.lease_taken", cause: "the spend lease was taken before the row was written" }))
          } else {
            // After a failed try, a row found written was written by that try.
            finish(w, { costNanos: r.cost, written: r.written || uncertain }, uncertain || r.fenced)
          }
        }
      }).pipe(writing.withPermits(1))

    const drain = Effect.gen(function*() {
      while (waiting.length > 0) {
        const batch = waiting.slice(0, options.maxRows)
        waiting = waiting.slice(batch.length)
        yield* flush(batch)
      }
    })

    const linger = Effect.gen(function*() {
      const until = Date.now() + options.lingerMs
      while (waiting.length < options.maxRows && options.busy()) {
        const left = until - Date.now()
        if (left <= 0) return
        wake.closeUnsafe()
        yield* Effect.raceFirst(wake.await, pause(left))
      }
    })

    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      yield* wake.await
      yield* linger
      wake.closeUnsafe()
      yield* drain
    })))
    // Runs before the flusher is interrupted (finalizers run last-added first): nothing waiting is lost.
    yield* Effect.addFinalizer(() => drain)

    return {
      exclusive: (effect) => writing.withPermits(1)(effect),
      write: (row, after) =>
        Effect.withFiber((fiber) => {
          const done = Deferred.makeUnsafe<Written, StoreUnavailable>()
          waiting.push({ row, done, after, span: Context.getOrUndefined(fiber.context, Tracer.ParentSpan) })
          wake.openUnsafe()
          return Deferred.await(done)
        })
    }
  })
