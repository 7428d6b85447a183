import * as Batch from "@switchyard/core/schema/Batch"
import * as BatchLine from "@switchyard/core/schema/BatchLine"
import { Cause, Clock, Config, Duration, Effect, Fiber, Layer, Option, Ref, Schedule, Stream } from "effect"
import { GatewayMetrics } from "../observability/GatewayMetrics.ts"
import { type BatchRow, BatchStore, type Claimer, type NewUnit, type UnitRow } from "../store/BatchStore.ts"
import { GatewayProcess } from "../store/GatewayProcesses.ts"
import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import * as FileChunks from "../store/FileChunks.ts"
import { type BatchIdentity, identityOf, type LineOutcome, requestId } from "./BatchLines.ts"
import { LineRunner } from "./LineRunner.ts"
import * as BatchWire from "./BatchWire.ts"
import { ProviderBatches } from "./ProviderBatches.ts"
import type { NewProviderBatch } from "../store/ProviderBatchStore.ts"

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

/** A worker's next unit, claimed when its last one was written. */
interface Held {
  next: Option.Option<UnitRow>
}

// Worth another try, later: the upstream or the gateway was busy, not the request wrong.
const retryable = (status: number) => status === 429 || status === 502 || status === 503 || status === 524 || status === 529

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
        yield* validate(id).pipe(Effect.onError(() => Effect.ignore(store.releaseValidation(id, owner))))
      }).pipe(Effect.ensuring(Effect.sync(() => validatingHere.delete(id))))
    })

  const validate = (id: string) =>
    Effect.gen(function*() {
      const found = yield* store.batchById(id)
      if (Option.isNone(found)) return
      const batch = found.value
      const units: Array<NewUnit> = []
      let total = 0
      let json = 0
      let lineNumber = 0
      const customIds = new Set<string>()
      let duplicate: { readonly line: number; readonly customId: string } | undefined
      yield* Stream.runForEach(store.chunks(batch.input_file_id), (chunk) =>
        Effect.sync(() => {
          const texts = FileChunks.linesOf(chunk.data)
          for (let offset = 0; offset < texts.length; offset += config.unitLines) {
            units.push({
              seq: units.length,
              inputSeq: chunk.seq,
              lineOffset: offset,
              firstLine: lineNumber + offset + 1,
              lineCount: Math.min(config.unitLines, texts.length - offset)
            })
          }
          for (const [i, text] of texts.entries()) {
            if (text.trim().length === 0) continue
            total += 1
            const customId = BatchLine.customIdOf(text)
            if (customId === undefined) continue
            json += 1
            if (customId === null || duplicate !== undefined) continue
            // OpenAI refuses a file in which two requests share a custom_id: the first repeat is named.
            if (customIds.has(customId)) duplicate = { line: lineNumber + i + 1, customId }
            else customIds.add(customId)
          }
          lineNumber += texts.length
        }))
      customIds.clear()
      const now = yield* Clock.currentTimeMillis
      const failure = (code: string, message: string, line: number | null = null, param: string | null = null) =>
        store.fail(id, [{ code, message, param: line === null ? "input_file_id" : param, line }], now)
      if (total === 0) return yield* failure("empty_file", "The input file has no lines")
      if (duplicate !== undefined) {
        return yield* failure(
          "duplicate_custom_id",
          `The custom_id for this request is a duplicate of another request (line ${duplicate.line}, custom_id ${JSON.stringify(duplicate.customId)}). The custom_id parameter must be unique for each individual request in a batch.`,
          duplicate.line,
          "custom_id"
        )
      }
      if (json === 0) return yield* failure("invalid_json_line", "The input file is not JSONL: no line is a JSON object", 1)
      if (total > Batch.limits.lines) {
        return yield* failure("too_many_requests", `The input file has ${total} lines; a batch takes at most ${Batch.limits.lines}`)
      }
      yield* store.start(id, units, total, now)
      yield* Effect.logInfo("batch started").pipe(Effect.annotateLogs({ batch_id: id, lines: total, units: units.length }))
    })

  const runLine = (batch: BatchIdentity, line: number, text: string, stopped: () => boolean): Effect.Effect<LineOutcome> =>
    Effect.gen(function*() {
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
  const watch = (unit: UnitRow) =>
    Effect.gen(function*() {
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
  const runUnit = (unit: UnitRow, held: Held) => {
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
            stopping ? Effect.void : Effect.flatMap(runLine(batch, line, text, stopped), (outcome) =>
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
      const ended = yield* Effect.raceFirst(Effect.as(Fiber.join(running), "done" as const), watch(unit))
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
        metrics.batchLines({ endpoint: row.endpoint, served: served.length, failed: failed.length })
        yield* Effect.logDebug("batch unit").pipe(Effect.annotateLogs({
          batch_id: row.id,
          first_line: unit.first_line,
          served: served.length,
          failed: failed.length
        }))
      }
    }).pipe(Effect.ensuring(Effect.suspend(() => release)))
  }

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
        yield* runUnit(unit.value, held).pipe(Effect.onInterrupt(() => Effect.ignore(store.release(unit.value, owner))))
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
