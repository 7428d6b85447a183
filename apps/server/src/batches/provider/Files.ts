import { Clock, Effect, Option } from "effect"
import type { BatchRow } from "../../store/batches/BatchStore.ts"
import * as FileChunks from "../../store/batches/FileChunks.ts"
import type { ProviderBatchRow } from "../../store/batches/ProviderBatchStore.ts"
import { generationId, identityOf, type LineOutcome } from "../BatchLines.ts"
import type { Runtime } from "./Runtime.ts"

/** A provider batch's lines as they are in the batch's input file. */
export const linesOf = (run: Runtime, row: BatchRow, part: ProviderBatchRow) =>
  Effect.gen(function*() {
    const numbers = JSON.parse(part.lines) as ReadonlyArray<number>
    const chunk = yield* run.store.chunk(row.input_file_id, part.input_seq)
    const texts = Option.isSome(chunk) ? FileChunks.linesOf(chunk.value.data) : []
    return numbers.map((line) => ({ line, text: texts[part.line_offset + (line - part.first_line)] ?? "" }))
  })

/**
 * Writes the lines' outcomes into the batch's output and error files (a line with none was not
 * run), with the provider batch done, and their access lines.
 */
export const write = (
  run: Runtime,
  row: BatchRow,
  part: ProviderBatchRow,
  lines: ReadonlyArray<{ readonly line: number }>,
  results: ReadonlyArray<LineOutcome | undefined>,
  upstreamStatus: string
) =>
  Effect.gen(function*() {
    const outcomes = results.filter((o): o is LineOutcome => o !== undefined)
    const served = outcomes.filter((o) => o.served)
    const failed = outcomes.filter((o) => !o.served)
    const written = yield* run.parts.finish(part, run.owner, {
      output: served.map((o) => `${o.line}\n`).join(""),
      errors: failed.map((o) => `${o.line}\n`).join(""),
      completed: served.length,
      failed: failed.length,
      costNanos: served.reduce((sum, o) => sum + (o.costNanos ?? 0n), 0n),
      upstreamStatus,
      now: yield* Clock.currentTimeMillis
    })
    if (!written) return
    run.metrics.batchLines(row.endpoint, outcomes)
    // Each line's own line at `debug`, as a live-run line has: the batch, the line, its status and generation.
    const batch = identityOf(row)
    yield* Effect.forEach(lines, ({ line }, i) => {
      const outcome = results[i]
      if (outcome === undefined) return Effect.void
      return Effect.logDebug("batch line").pipe(Effect.annotateLogs({
        batch_id: row.id,
        line,
        path: row.endpoint,
        status: outcome.status,
        provider_batch: part.upstream_batch_id ?? "",
        mode: outcome.mode ?? "live",
        ...(outcome.served ? { generation_id: generationId(batch, line) } : {})
      }))
    }, { discard: true })
  })
