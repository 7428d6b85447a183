import { Config, Context, Effect, type Fiber, Layer, Logger, LogLevel, Option, References, Tracer } from "effect"

/**
 * How the gateway logs: `SWITCHYARD_LOG_FORMAT` (`json`, one event per line, or `pretty`; by
 * default `pretty` on a terminal and `json` otherwise) and `SWITCHYARD_LOG_LEVEL` (`debug`,
 * `info`, `warn`, `error`; default `info`).
 */
const LogConfig = Config.all({
  format: Config.Literals(["json", "pretty"], "SWITCHYARD_LOG_FORMAT").pipe(Config.option),
  level: Config.Literals(["debug", "info", "warn", "error"], "SWITCHYARD_LOG_LEVEL").pipe(Config.withDefault("info" as const))
})

const levels: Record<"debug" | "info" | "warn" | "error", LogLevel.LogLevel> = {
  debug: "Debug",
  info: "Info",
  warn: "Warn",
  error: "Error"
}

// The fields every line starts with; an annotation of the same name cannot replace them.
const reserved = new Set(["time", "level", "message", "cause", "trace_id", "span_id"])

const plain = (value: unknown): unknown =>
  typeof value === "bigint" ? value.toString() : typeof value === "function" || typeof value === "symbol" ? String(value) : value

const replacer = (_key: string, value: unknown) => typeof value === "bigint" ? value.toString() : value

// The span a line belongs to, when a real tracer (not Effect's built-in no-export one) samples it.
const sampledSpan = (fiber: Fiber.Fiber<unknown, unknown>) => {
  if (fiber.getRef(Tracer.Tracer) === Tracer.nativeTracer) return undefined
  const span = Option.getOrUndefined(Context.getOption(fiber.context, Tracer.ParentSpan))
  return span !== undefined && span._tag === "Span" && span.sampled ? span : undefined
}

/**
 * One JSON object per line on standard output: `time`, `level`, `message`, the log annotations
 * as top-level fields, `cause` when the event carries one, and `trace_id` / `span_id` while a
 * sampled span is current. Effect's structured formatter reads the event; this only lays it out.
 */
const json = Logger.make<unknown, void>((options) => {
  const event = Logger.formatStructured.log(options)
  const messages = Array.isArray(event.message) ? event.message : [event.message]
  const line: Record<string, unknown> = {
    time: event.timestamp,
    level: event.level.toLowerCase(),
    message: messages.length === 0 ? "" : plain(messages[0])
  }
  if (messages.length > 1) line.details = messages.slice(1).map(plain)
  for (const key in event.annotations) {
    if (!reserved.has(key)) line[key] = plain(event.annotations[key])
  }
  if (event.cause !== undefined) line.cause = event.cause
  const span = sampledSpan(options.fiber)
  if (span !== undefined) {
    line.trace_id = span.traceId
    line.span_id = span.spanId
  }
  process.stdout.write(`${JSON.stringify(line, replacer)}\n`)
})

/**
 * A debug line with its annotations, both made only when the minimum level lets debug lines
 * through: a filtered line costs no allocation.
 */
export const debug = (message: string, annotations: () => Record<string, unknown>): Effect.Effect<void> =>
  Effect.withFiber((fiber) =>
    LogLevel.isGreaterThan(fiber.getRef(References.MinimumLogLevel), "Debug")
      ? Effect.void
      : Effect.logDebug(message).pipe(Effect.annotateLogs(annotations()))
  )

/**
 * The gateway's logger and minimum level, from `SWITCHYARD_LOG_FORMAT` and `SWITCHYARD_LOG_LEVEL`.
 */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const config = yield* LogConfig
  const format = config.format._tag === "Some" ? config.format.value : process.stdout.isTTY ? "pretty" : "json"
  return Layer.mergeAll(
    Logger.layer([format === "json" ? json : Logger.consolePretty()]),
    Layer.succeed(References.MinimumLogLevel, levels[config.level])
  )
}))
