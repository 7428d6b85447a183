/**
 * Ledger rows written in batches: settled and recorded requests put their row here, and one
 * statement (`switchyard_flush`) writes every row waiting, with the spend counters, the workspace's
 * usage and the leases' amounts it moves. A caller resumes once the statement carrying its row
 * committed (on PGlite: on disk), so an answer that reports a cost is never ahead of its row.
 *
 * **Details**
 *
 * One flush runs at a time. Rows that arrive while it runs wait for the next. Before a flush starts
 * it lingers (at most `lingerMs`) while some admitted request has not settled yet (`busy`), so
 * that under load one flush carries the rows of many requests; a lone request, with nothing else
 * in flight, waits for nothing but its own statement. A flush that fails is
 * tried again (three times, 50 ms apart, then 200 ms); its rows fail with `StoreUnavailable` only
 * after that. Closing the scope writes what is waiting before it returns.
 */
import { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Clock, Context, Deferred, Duration, Effect, Latch, Schedule, Schema, Tracer } from "effect"
import type { Scope } from "effect"
import type { SqlClient } from "effect/sql"
import * as Span from "../observability/Span.ts"
import type { StoreStatements } from "./StoreStatements.ts"

/** A ledger row, as `switchyard_flush` reads it (money and times as strings). */
export interface LedgerRow {
  readonly generation: string
  readonly key: string
  readonly workspace: string
  readonly model: string
  readonly provider: string
  readonly prompt_tokens: number
  readonly total_tokens: number
  readonly cost: string
  readonly byok: boolean
  readonly created: string
  readonly latency_ms: number | null
  readonly cached_items: number
  readonly cached_tokens: number
  /** The lease whose amount the charge leaves, if the request was admitted from one. */
  readonly lease: string | null
}

/** What became of a row: written now, or found written before with this cost. */
export interface Written {
  readonly costNanos: bigint
  readonly written: boolean
}

const FlushRow = Schema.Struct({ o_generation: Schema.String, o_cost: Schema.String, o_written: Schema.Boolean })
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(FlushRow))

interface Waiting {
  readonly row: LedgerRow
  readonly done: Deferred.Deferred<Written, StoreUnavailable>
  /** Runs when the row's batch ended, whoever still waits for it: `undefined` when it failed. */
  readonly after: (written: Written | undefined) => void
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
}

export interface LedgerBatch {
  /** Writes the row with the next batch; `after` runs once that batch ended, even if the caller left. */
  readonly write: (row: LedgerRow, after: (written: Written | undefined) => void) => Effect.Effect<Written, StoreUnavailable>
  /** Tells a lingering flush that `busy` may have changed. */
  readonly nudge: () => void
}

/** A real-time wait: the linger is a matter of the machine's time, whatever clock the caller runs on. */
const pause = (ms: number) =>
  Effect.callback<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

export const make = (
  sql: SqlClient.SqlClient,
  statements: StoreStatements["Service"],
  options: LedgerBatchOptions
): Effect.Effect<LedgerBatch, never, Scope.Scope> =>
  Effect.gen(function*() {
    let waiting: Array<Waiting> = []
    const wake = Latch.makeUnsafe(false)

    const statement = (rows: ReadonlyArray<LedgerRow>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const expires = new Date(now + Duration.toMillis(options.leaseTtl))
        const out = yield* sql`SELECT o_generation, o_cost, o_written FROM switchyard_flush(${JSON.stringify(rows)}::jsonb, ${expires})`
        return yield* decodeRows(out).pipe(Effect.orDie) // the function's own result type: a mismatch is a bug
      }).pipe(
        Effect.retry({ times: 3, schedule: Schedule.spaced(Duration.millis(50)) }),
        Effect.mapError((cause) => new StoreUnavailable({ operation: "ledger.flush", cause }))
      )

    // Background work under a span of its own, named for what it does and linked to the requests
    // whose rows it carries; its SQL statement is the span's child.
    const traced = (batch: ReadonlyArray<Waiting>) =>
      statement(batch.map((w) => w.row)).pipe(Effect.withSpan("ledger.flush", {
        root: true,
        attributes: { "switchyard.ledger.rows": batch.length },
        links: batch.flatMap((w) => w.span === undefined ? [] : [{ span: w.span, attributes: {} }])
      }, Span.perRequest))

    const flush = (batch: ReadonlyArray<Waiting>) =>
      Effect.gen(function*() {
        statements.batchRows(batch.length)
        const exit = yield* Effect.exit(traced(batch))
        if (exit._tag === "Failure") {
          for (const w of batch) {
            w.after(undefined)
            Deferred.doneUnsafe(w.done, Effect.failCause(exit.cause))
          }
          return
        }
        const byGeneration = new Map(exit.value.map((r) => [r.o_generation, r]))
        for (const w of batch) {
          const r = byGeneration.get(w.row.generation)!
          const written: Written = { costNanos: BigInt(r.o_cost), written: r.o_written }
          w.after(written)
          Deferred.doneUnsafe(w.done, Effect.succeed(written))
        }
      })

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
      write: (row, after) =>
        Effect.withFiber((fiber) => {
          const done = Deferred.makeUnsafe<Written, StoreUnavailable>()
          waiting.push({ row, done, after, span: Context.getOrUndefined(fiber.context, Tracer.ParentSpan) })
          wake.openUnsafe()
          return Deferred.await(done)
        }),
      nudge: () => void wake.openUnsafe()
    }
  })
