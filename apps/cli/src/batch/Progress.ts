import { SingleBar } from "cli-progress"
import { Effect } from "effect"

export interface Tally {
  readonly items: number
  readonly tokens: number
  readonly cost: number
}

export interface Progress {
  readonly advance: (tally: Tally) => void
  readonly stop: () => void
}

export const duration = (seconds: number): string => {
  if (!Number.isFinite(seconds)) return "?"
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
}

export const rateAndEta = (options: { readonly done: number; readonly remaining: number; readonly elapsedMs: number }) => {
  const rate = options.elapsedMs > 0 ? (options.done * 1000) / options.elapsedMs : 0
  return { rate, eta: rate > 0 ? options.remaining / rate : Number.POSITIVE_INFINITY }
}

export const make = (options: {
  readonly total: number
  readonly initial: number
  readonly terminal: boolean
  readonly stream?: NodeJS.WriteStream
  readonly formatCost: (cost: number) => string
}) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const stream = options.stream ?? process.stderr
      const started = Date.now()
      let done = 0
      let tokens = 0
      let cost = 0
      let stopped = false
      const figures = () => {
        const { eta, rate } = rateAndEta({ done, remaining: options.total - options.initial - done, elapsedMs: Date.now() - started })
        return { speed: rate.toFixed(1), left: duration(eta), tokens: tokens.toLocaleString("en-US"), spent: options.formatCost(cost) }
      }
      if (options.terminal) {
        const bar = new SingleBar({
          stream,
          format: "embedding {bar} {percentage}% | {value}/{total} | {speed}/s | ETA {left} | {tokens} tokens | {spent}",
          barsize: 30,
          barCompleteChar: "\u2588",
          barIncompleteChar: "\u2591",
          hideCursor: true,
          fps: 10
        })
        bar.start(options.total, options.initial, figures())
        return {
          advance: (tally: Tally) => {
            done += tally.items
            tokens += tally.tokens
            cost += tally.cost
            bar.update(options.initial + done, figures())
          },
          stop: () => {
            if (stopped) return
            stopped = true
            bar.stop()
          }
        }
      }
      let last = 0
      const print = () => {
        const f = figures()
        const at = options.initial + done
        const percent = options.total === 0 ? 100 : Math.floor((at * 100) / options.total)
        stream.write(`embedded ${at}/${options.total} (${percent}%), ${f.speed}/s, ETA ${f.left}\n`)
      }
      return {
        advance: (tally: Tally) => {
          done += tally.items
          tokens += tally.tokens
          cost += tally.cost
          if (Date.now() - last >= 2000 || options.initial + done === options.total) {
            last = Date.now()
            print()
          }
        },
        stop: () => {}
      }
    }),
    (progress) => Effect.sync(progress.stop)
  ).pipe(Effect.map((progress): Progress => progress))
