import { GatewayClient } from "@switchyard/client/GatewayClient"
import type { EmbeddingRequest } from "@switchyard/core/schema/EmbeddingRequest"
import { Effect, Schedule } from "effect"
import * as Connection from "../Connection.ts"
import * as Failure from "../Failure.ts"
import * as Output from "../Output.ts"
import * as InputFile from "./InputFile.ts"
import * as OutputFile from "./OutputFile.ts"
import * as Progress from "./Progress.ts"

export interface Options {
  readonly file: string
  readonly out: string
  readonly format: InputFile.Format
  readonly fields: InputFile.Fields
  readonly batchSize: number
  readonly concurrency: number
  readonly request: Omit<EmbeddingRequest, "input">
  readonly terminal: boolean
}

interface Summary {
  readonly model: string
  readonly total: number
  readonly skipped: number
  readonly embedded: number
  /** Of those embedded now, how many the gateway's cache served. */
  readonly cached: number
  readonly tokens: number
  readonly cost: number
  readonly seconds: number
  readonly out: string
}

const maxBatchChars = 500_000

export const chunk = <A extends { readonly text: string }>(items: ReadonlyArray<A>, size: number, maxChars = maxBatchChars) => {
  const batches: Array<Array<A>> = []
  let current: Array<A> = []
  let chars = 0
  for (const item of items) {
    if (current.length > 0 && (current.length >= size || chars + item.text.length > maxChars)) {
      batches.push(current)
      current = []
      chars = 0
    }
    current.push(item)
    chars += item.text.length
  }
  if (current.length > 0) batches.push(current)
  return batches
}

export const run = (options: Options) =>
  Effect.scoped(Effect.gen(function*() {
    const items = yield* InputFile.read(options.file, options.format, options.fields)
    const existing = yield* OutputFile.prepare(options.out)
    const todo = items.filter((item) => !existing.done.has(item.key))
    const skipped = items.length - todo.length
    if (existing.partialBytes > 0) {
      yield* Output.note(`Removed an unfinished last line from ${options.out} (${existing.partialBytes} bytes); its input will be embedded again.`)
    }
    if (skipped > 0) yield* Output.note(`${skipped} of ${items.length} inputs are already in ${options.out}; embedding the other ${todo.length}.`)
    const write = yield* OutputFile.appender(options.out)
    const client = yield* GatewayClient
    const context = Failure.context(yield* Connection.resolved)
    const started = Date.now()
    const tally = { embedded: 0, cached: 0, tokens: 0, cost: 0 }
    const saved = () => `${skipped + tally.embedded} of ${items.length} inputs are saved in ${options.out}`
    const progress = yield* Progress.make({
      total: items.length,
      initial: skipped,
      terminal: options.terminal,
      formatCost: Output.money
    })
    yield* Effect.forEach(
      chunk(todo, options.batchSize),
      (batch) =>
        Effect.gen(function*() {
          const response = yield* client.embeddings.create({ payload: { ...options.request, input: batch.map((item) => item.text) } }).pipe(
            Effect.retry({ while: (error) => error._tag === "TooManyRequests", times: 5, schedule: Schedule.spaced("5 seconds") })
          )
          if (response.data.length !== batch.length) {
            return yield* new Failure.Failure({
              message: `The gateway returned ${response.data.length} vectors for ${batch.length} inputs`,
              hint: undefined,
              exitCode: Failure.ExitCode.refused
            })
          }
          const byIndex = [...response.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
          yield* write(batch.map((item, i) => OutputFile.line(item.id, byIndex[i]!.embedding)))
          const tokens = response.usage?.prompt_tokens ?? 0
          const cost = response.usage?.cost ?? 0
          tally.embedded += batch.length
          tally.cached += response.switchyard?.cache?.items ?? 0
          tally.tokens += tokens
          tally.cost += cost
          progress.advance({ items: batch.length, tokens, cost })
        }),
      { concurrency: options.concurrency, discard: true }
    ).pipe(
      Effect.onInterrupt(() =>
        Effect.andThen(
          Effect.sync(progress.stop),
          Output.note(`Interrupted: ${saved()}. Run the same command again to continue.`)
        )
      ),
      Effect.catch((error) =>
        Effect.gen(function*() {
          progress.stop()
          const failure = yield* Failure.describe(error, context)
          return yield* new Failure.Failure({
            message: failure.message,
            exitCode: failure.exitCode,
            hint: `${failure.hint === undefined ? "" : `${failure.hint}\n       `}${saved()}; run the same command again to continue.`
          })
        })
      )
    )
    progress.stop()
    return {
      model: options.request.model,
      total: items.length,
      skipped,
      embedded: tally.embedded,
      cached: tally.cached,
      tokens: tally.tokens,
      cost: tally.cost,
      seconds: (Date.now() - started) / 1000,
      out: options.out
    } satisfies Summary
  }))
