/**
 * What an operator reads when the gateway cannot start: one line on standard error naming the
 * cause (busy port, bad setting, unreachable database, locked data directory...), and the exit
 * code 1. The stack trace and the whole cause follow only at `SWITCHYARD_LOG_LEVEL=debug` (or
 * `trace`). Nothing here prints a setting's value, so no secret reaches the terminal.
 */
import { Cause, Effect, Option } from "effect"

interface Tagged {
  readonly _tag?: unknown
  readonly message?: unknown
  readonly cause?: unknown
  readonly code?: unknown
  readonly address?: unknown
  readonly port?: unknown
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/gu, " ").replace(/\s+/gu, " ").trim()

const messageOf = (value: unknown): string => {
  if (value instanceof Error) return value.message
  if (typeof value === "object" && value !== null && typeof (value as Tagged).message === "string") return (value as Tagged).message as string
  return String(value)
}

/** The distinct messages along an error's chain of causes, outermost first. */
const messages = (value: unknown): string => {
  const seen: Array<string> = []
  let current: unknown = value
  for (let depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    const message = messageOf(current)
    if (message.length > 0 && !seen.some((earlier) => earlier.includes(message))) seen.push(message)
    current = typeof current === "object" ? (current as Tagged).cause : undefined
  }
  return seen.join(": ")
}

const listenFailure = (cause: unknown): string => {
  const error = (cause ?? {}) as Tagged
  const where = typeof error.address === "string" && error.port !== undefined ? ` on ${error.address}:${String(error.port)}` : ""
  switch (error.code) {
    case "EADDRINUSE":
      return `cannot listen${where}: the address is already in use (SWITCHYARD_HOST, SWITCHYARD_PORT)`
    case "EACCES":
      return `cannot listen${where}: permission denied (SWITCHYARD_HOST, SWITCHYARD_PORT)`
    case "EADDRNOTAVAIL":
      return `cannot listen${where}: the address is not one of this machine's (SWITCHYARD_HOST)`
    default:
      return `cannot listen${where}: ${messageOf(cause)}`
  }
}

/** The one line that names why the start failed. */
export const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Option.getOrElse(Cause.findErrorOption(cause), () => Cause.squash(cause)) as Tagged
  const tag = typeof error === "object" && error !== null ? error._tag : undefined
  switch (tag) {
    case "ServeError":
      return oneLine(listenFailure(error.cause))
    case "ConfigError":
      return oneLine(`bad setting: ${messageOf(error.cause ?? error)}`)
    case "StoreStartFailed":
      return oneLine(`cannot use ${String((error as Tagged & { store?: unknown }).store)}: ${messages(error.cause)}`)
    case "SqlError":
      return oneLine(`cannot use the store: ${messages(error)}`)
    default:
      return oneLine(messages(error) || String(tag ?? "unknown failure"))
  }
}

const debugLevels = new Set(["debug", "trace", "all"])

/**
 * Reports a failure of `self` (not an interruption: SIGTERM is a normal stop) as one line on
 * standard error (`switchyard: <what>: <cause>`), with the full cause at debug level. Run with error reporting off, so that the
 * line is all an operator sees.
 */
export const report = (what: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tapCause(self, (cause) =>
    Effect.sync(() => {
      if (Cause.hasInterruptsOnly(cause)) return
      process.stderr.write(`switchyard: ${what}: ${describe(cause)}\n`)
      if (debugLevels.has((process.env.SWITCHYARD_LOG_LEVEL ?? "").toLowerCase())) process.stderr.write(`${Cause.pretty(cause)}\n`)
    }))
