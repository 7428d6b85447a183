import type * as Batch from "@switchyard/core/schema/Batch"
import { Cause, Clock, Config, Duration, Effect, Layer, Option, Ref, Stream } from "effect"
import { GatewayMetrics } from "../observability/GatewayMetrics.ts"
import { type BatchRow, BatchStore, type Claimer } from "../store/batches/BatchStore.ts"
import { GatewayProcess } from "../store/money/GatewayProcesses.ts"
import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import * as FileChunks from "../store/batches/FileChunks.ts"
import { LineRunner } from "./LineRunner.ts"
import * as BatchWire from "./BatchWire.ts"
import { ProviderBatches } from "./ProviderBatches.ts"
import { type Held, runUnit, type UnitRunner } from "./Units.ts"
import { validate } from "./Validation.ts"

const BatchRunnerConfig = Config.all({
  /** Units a replica runs at once. */
  workers: Config.Int("SWITCHYARD_BATCH_WORKERS").pipe(Config.withDefault(4)),
  /** Lines of one unit run at once. */
  lineConcurrency: Config.Int("SWITCHYARD_BATCH_LINE_CONCURRENCY").pipe(Config.withDefault(16)),
  /** Lines per unit: the claimable, checkpointed part of a batch. */
  unitLines: Config.Int("SWITCHYARD_BATCH_UNIT_LINES").pipe(Config.withDefault(256)),
  /** How often an idle replica looks for work, and a running unit for a cancel. */
  pollMs: Config.Int("SWITCHYARD_BATCH_POLL_MS").pipe(Config.withDefault(1_000)),
  /** How long files (uploads, outputs and errors) are kept after they were made. */
  retention: BatchWire.Retention
})

/**
 * The batches' background work, one per gateway process, in the server's scope: validates new
 * batches into units (one process per batch), claims units in this process's name (held while the
 * process is alive: a unit of a process judged dead by `GatewayProcesses` is claimed again at
 * once; on the embedded store with one worker, a unit claimed before a restart), runs their lines through the live model path at a bounded
 * concurrency, paced by busy answers, writes each unit's output and error lines with its counts in
 * one transaction, and finishes batches whose units are all done. A cancel is seen within one poll.
 */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* BatchRunnerConfig
  const store = yield* BatchStore
  const lines = yield* LineRunner
  const providers = yield* ProviderBatches
  const metrics = yield* GatewayMetrics
  const gatewayProcess = yield* GatewayProcess
  const owner = gatewayProcess.id
  const claimer = (now: number): Claimer => ({ owner, now, staleAfter: gatewayProcess.staleAfter })
  // Until when every line waits: set by an answer that says the upstream is busy.
  const pausedUntil = yield* Ref.make(0)

  // Batches this process validates now: its workers share its claims.
  const validatingHere = new Set<string>()

  /** Validates the batch if no other live process or worker of this one does. */
  const validateOnce = (id: string) =>
    Effect.gen(function*() {
      if (validatingHere.has(id)) return
      validatingHere.add(id)
      yield* Effect.gen(function*() {
        if (!(yield* store.claimValidation(id, claimer(yield* Clock.currentTimeMillis)))) return
        // Let go if it did not end (a store error): a later try, here or elsewhere, claims it again.
        yield* validate(store, config.unitLines, id).pipe(Effect.onError(() => Effect.ignore(store.releaseValidation(id, owner))))
      }).pipe(Effect.ensuring(Effect.sync(() => validatingHere.delete(id))))
    })

  const run: UnitRunner = { config, store, lines, providers, metrics, owner, claimer, pausedUntil }

  /** The failed lines of a batch by their status, read from its error file. */
  const failuresOf = (errorFile: string) =>
    errorFile === ""
      ? Effect.succeed<Record<string, number>>({})
      : Stream.runFold(store.chunks(errorFile), () => ({}) as Record<string, number>, (counts, chunk) => {
        for (const text of FileChunks.linesOf(chunk.data)) {
          const found = /"error":\{"code":(?:(\d+)|"([^"]+)")/u.exec(text)
          const code = found?.[1] ?? found?.[2] ?? "other"
          counts[code] = (counts[code] ?? 0) + 1
        }
        return counts
      })

  /** A batch's one line at its end: its counts, cost, duration and failures by status. */
  const finished = (batch: BatchRow, status: Batch.Status, errorFile: string) =>
    Effect.gen(function*() {
      const failures = Number(batch.failed) > 0 ? yield* failuresOf(errorFile) : {}
      const now = yield* Clock.currentTimeMillis
      yield* Effect.logInfo("batch finished").pipe(Effect.annotateLogs({
        batch_id: batch.id,
        status,
        lines: Number(batch.total),
        served: Number(batch.completed),
        failed: Number(batch.failed),
        cost: creditsFromNanos(BigInt(batch.cost_nanos)),
        duration_ms: now - Number(batch.created_at),
        failures
      }))
    }).pipe(Effect.catch((error) => Effect.logWarning("batch finished; its failures could not be counted", error)))

  // Completion windows are checked once a poll by one of the workers.
  let lastExpiryCheck = 0
  const step = (held: Held) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (now - lastExpiryCheck >= config.pollMs) {
        lastExpiryCheck = now
        yield* store.expireOverdue(now)
      }
      for (const id of yield* store.validating) yield* validateOnce(id)
      // The unit claimed as the last one was written, else one claimed now.
      const unit = Option.isSome(held.next) ? held.next : yield* store.claim(claimer(yield* Clock.currentTimeMillis))
      held.next = Option.none()
      if (Option.isSome(unit)) {
        // A process that stops gives its unit back; its served lines settle again as no-ops.
        yield* runUnit(run, unit.value, held).pipe(Effect.onInterrupt(() => Effect.ignore(store.release(unit.value, owner))))
      }
      const ended = yield* store.finalize(claimer(yield* Clock.currentTimeMillis))
      for (const one of ended) yield* finished(one.batch, one.status, one.errorFile)
      return Option.isSome(unit)
    })

  const worker = Effect.suspend(() => {
    const held: Held = { next: Option.none() }
    return step(held).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logError("batch work failed", Cause.pretty(cause)).pipe(Effect.as(false))
      ),
      Effect.flatMap((worked) => (worked ? Effect.void : Effect.sleep(Duration.millis(config.pollMs)))),
      Effect.forever,
      // A unit claimed but not yet run is given back too.
      Effect.onInterrupt(() => Option.isSome(held.next) ? Effect.ignore(store.release(held.next.value, owner)) : Effect.void)
    )
  })
  // The runner's polls and leases run on the system clock: a test that moves its TestClock by
  // days (the ledger's retention) would otherwise run every poll of those days.
  const systemClock = Effect.provideService(Clock.Clock, Clock.Clock.defaultValue())
  for (let i = 0; i < config.workers; i++) yield* Effect.forkScoped(systemClock(worker))

  // Expired files go once a minute at most, and at least as often as they expire.
  const retentionMs = Duration.toMillis(config.retention)
  const sweepMs = Math.max(config.pollMs, Math.min(60_000, retentionMs / 2))
  yield* Effect.forkScoped(systemClock(
    Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => store.expire(now - retentionMs)),
      Effect.catchCause((cause) => Effect.logError("batch file retention failed", Cause.pretty(cause))),
      Effect.andThen(Effect.sleep(Duration.millis(sweepMs))),
      Effect.forever
    )
  ))
}))
