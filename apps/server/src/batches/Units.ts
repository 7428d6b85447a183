import * as BatchLine from "@switchyard/core/schema/BatchLine"
import { Clock, Duration, Effect, Fiber, Option, Ref, Schedule } from "effect"
import type { GatewayMetrics } from "../observability/GatewayMetrics.ts"
import type { BatchStore, Claimer, UnitRow } from "../store/batches/BatchStore.ts"
import * as FileChunks from "../store/batches/FileChunks.ts"
import type { NewProviderBatch } from "../store/batches/ProviderBatchStore.ts"
import { type BatchIdentity, identityOf, type LineOutcome, requestId } from "./BatchLines.ts"
import type { LineRunner } from "./LineRunner.ts"
import type { ProviderBatches } from "./ProviderBatches.ts"

/** What running a unit takes: the runner's settings, services, claims' owner, and its pause. */
export interface UnitRunner {
  readonly config: { readonly lineConcurrency: number; readonly pollMs: number }
  readonly store: BatchStore["Service"]
  readonly lines: LineRunner["Service"]
  readonly providers: ProviderBatches["Service"]
  readonly metrics: GatewayMetrics["Service"]
  readonly owner: string
  readonly claimer: (now: number) => Claimer
  /** Until when every line waits: set by an answer that says the upstream is busy. */
  readonly pausedUntil: Ref.Ref<number>
}

/** A worker's next unit, claimed when its last one was written. */
export interface Held {
  next: Option.Option<UnitRow>
}

// Worth another try, later: the upstream or the gateway was busy, not the request wrong.
const retryable = (status: number) => status === 429 || status === 502 || status === 503 || status === 524 || status === 529

const runLine = (run: UnitRunner, batch: BatchIdentity, line: number, text: string, stopped: () => boolean): Effect.Effect<LineOutcome> =>
  Effect.gen(function*() {
    const { lines, pausedUntil } = run
    const wait = (yield* Ref.get(pausedUntil)) - (yield* Clock.currentTimeMillis)
    if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
    const outcome = yield* lines.run(batch, line, text)
    if (!outcome.served && retryable(outcome.status)) {
      const now = yield* Clock.currentTimeMillis
      yield* Ref.update(pausedUntil, (until) => Math.max(until, now + 1_000))
      return yield* Effect.fail(outcome)
    }
    return outcome
  }).pipe(
    Effect.retry({ schedule: Schedule.exponential(Duration.seconds(1)), times: 3, while: () => !stopped() }),
    Effect.catch((outcome) => Effect.succeed(outcome))
  )

// Stops when the batch is being cancelled, or when the claim was lost (this process was judged
// dead while frozen or cut off from the store, and another took the unit).
const watch = (run: UnitRunner, unit: UnitRow) =>
  Effect.gen(function*() {
    const { config, store, owner } = run
    while (true) {
      yield* Effect.sleep(Duration.millis(config.pollMs))
      const status = yield* store.status(unit.batch_id)
      if (Option.isNone(status) || status.value !== "in_progress") return "cancelled" as const
      if (!(yield* store.claimed(unit, owner))) return "lost" as const
    }
  })

/**
 * Runs a unit and writes its lines; the worker's next unit is claimed in the same transaction
 * and put in `held` at once (a worker stopped before running it gives it back).
 */
export const runUnit = (run: UnitRunner, unit: UnitRow, held: Held) => {
  const { config, store, lines, providers, metrics, owner, claimer, pausedUntil } = run
  // The holds that admitted the lines sent to provider batches, dropped once the unit is written.
  let release: Effect.Effect<void> = Effect.void
  return Effect.gen(function*() {
    const found = yield* store.batchById(unit.batch_id)
    if (Option.isNone(found)) return
    const row = found.value
    const batch = identityOf(row)
    const chunk = yield* store.chunk(row.input_file_id, unit.input_seq)
    const texts = Option.isSome(chunk)
      ? FileChunks.linesOf(chunk.value.data).slice(unit.line_offset, unit.line_offset + unit.line_count)
      : []
    const results: Array<LineOutcome | undefined> = Array.from({ length: unit.line_count })
    // A cancel stops new lines from starting; the lines in flight finish and are written, so
    // that every line charged is in the output.
    let stopping = false
    const stopped = () => stopping
    // Lines whose route has a provider batch API with a batch price go there (ProviderBatches.ts).
    let providerBatches: ReadonlyArray<NewProviderBatch> = []
    const work = Effect.gen(function*() {
      const wanted = texts.flatMap((text, i) => (text.trim().length === 0 ? [] : [{ i, line: unit.first_line + i, text }]))
      const diverted = yield* providers.divert({ ...batch, execution: row.execution }, wanted)
      providerBatches = diverted.providerBatches
      release = diverted.release
      const live = diverted.live
      const wait = (yield* Ref.get(pausedUntil)) - (yield* Clock.currentTimeMillis)
      if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
      const outcomes = yield* lines.runMany(batch, live, { concurrency: config.lineConcurrency, stopped })
      const again: Array<(typeof wanted)[number]> = []
      for (const [k, outcome] of outcomes.entries()) {
        if (outcome === undefined) continue
        if (!outcome.served && retryable(outcome.status)) again.push(live[k]!)
        else results[live[k]!.i] = outcome
      }
      if (again.length > 0) {
        // A busy upstream: those lines again, one by one, paced.
        const now = yield* Clock.currentTimeMillis
        yield* Ref.update(pausedUntil, (until) => Math.max(until, now + 1_000))
        yield* Effect.forEach(again, ({ i, line, text }) =>
          stopping ? Effect.void : Effect.flatMap(runLine(run, batch, line, text, stopped), (outcome) =>
            Effect.sync(() => {
              results[i] = outcome
            })), { concurrency: config.lineConcurrency, discard: true })
      }
    })
    if (row.expired_at !== null && Option.isSome(chunk)) {
      // The completion window passed before this unit ran: its lines are not run.
      for (const [i, text] of texts.entries()) {
        if (text.trim().length === 0) continue
        const customId = BatchLine.customIdOf(text)
        results[i] = { served: false, status: 0, line: BatchLine.expiredLine(requestId(batch, unit.first_line + i), customId ?? null) }
      }
    } else if (Option.isNone(chunk)) {
      // The input file was deleted under the batch: its lines cannot run.
      for (let i = 0; i < unit.line_count; i++) {
        const line = unit.first_line + i
        results[i] = {
          served: false,
          status: 404,
          line: BatchLine.errorLine(requestId(batch, line), null, 404, `Line ${line}: the input file was deleted`)
        }
      }
    }
    const running = yield* Effect.forkChild(row.expired_at === null ? work : Effect.void)
    const ended = yield* Effect.raceFirst(Effect.as(Fiber.join(running), "done" as const), watch(run, unit))
    if (ended === "lost") return yield* Fiber.interrupt(running)
    if (ended === "cancelled") {
      stopping = true
      yield* Fiber.join(running)
    }
    const served = results.filter((r): r is LineOutcome => r !== undefined && r.served)
    const failed = results.filter((r): r is LineOutcome => r !== undefined && !r.served)
    const now = yield* Clock.currentTimeMillis
    const { written } = yield* Effect.uninterruptible(Effect.tap(
      store.completeAndClaim(unit, owner, {
        output: served,
        errors: failed,
        completed: served.length,
        failed: failed.length,
        costNanos: served.reduce((sum, r) => sum + (r.costNanos ?? 0n), 0n),
        providerBatches,
        now
      }, claimer(now)),
      ({ next }) =>
        Effect.sync(() => {
          held.next = next
        })
    ))
    if (written) {
      metrics.batchLines(row.endpoint, [...served, ...failed])
      yield* Effect.logDebug("batch unit").pipe(Effect.annotateLogs({
        batch_id: row.id,
        first_line: unit.first_line,
        served: served.length,
        failed: failed.length
      }))
    }
  }).pipe(Effect.ensuring(Effect.suspend(() => release)))
}
