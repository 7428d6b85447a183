import * as Batch from "@switchyard/core/schema/Batch"
import * as BatchLine from "@switchyard/core/schema/BatchLine"
import { Clock, Effect, Option, Stream } from "effect"
import type { BatchStore, NewUnit } from "../store/batches/BatchStore.ts"
import * as FileChunks from "../store/batches/FileChunks.ts"

/**
 * Validates a new batch: its input file read a chunk at a time into units of `unitLines` lines,
 * its lines counted, and the first repeated `custom_id` found; the batch started with its units,
 * or failed saying why (no lines, a repeat, no JSON line, too many lines).
 */
export const validate = (store: BatchStore["Service"], unitLines: number, id: string) =>
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
        for (let offset = 0; offset < texts.length; offset += unitLines) {
          units.push({
            seq: units.length,
            inputSeq: chunk.seq,
            lineOffset: offset,
            firstLine: lineNumber + offset + 1,
            lineCount: Math.min(unitLines, texts.length - offset)
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
