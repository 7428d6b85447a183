import * as ApiError from "@switchyard/core/schema/ApiError"
import * as InternError from "@switchyard/core/errors/InternError"
import { Data, Effect, Option, type Redacted, Runtime, Schema } from "effect"
import { CliError } from "effect/cli"
import { HttpClientError } from "effect/http"
import * as Output from "./Output.ts"

export const ExitCode = {
  ok: 0,
  refused: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  limit: 5,
  unavailable: 6,
  interrupted: 130
} as const

export const exitCodeTable: ReadonlyArray<readonly [number, string]> = [
  [ExitCode.ok, "success"],
  [ExitCode.refused, "the gateway refused the request (400, 409, 413...), or answered something unexpected"],
  [ExitCode.usage, "bad flags, arguments, input file or base URL; nothing was sent"],
  [ExitCode.auth, "missing or invalid key (401), or the key may not do this (403)"],
  [ExitCode.notFound, "no such key, intern, model or workspace (404)"],
  [ExitCode.limit, "out of credits (402) or rate limited (429) after the retries"],
  [ExitCode.unavailable, "the gateway or its upstream failed (5xx), or could not be reached, after the retries"],
  [ExitCode.interrupted, "interrupted (Ctrl-C); what was written is kept"]
]

export class Usage extends Data.TaggedError("Usage")<{
  readonly message: string
  readonly hint?: string
}> {}

export class Failure extends Data.TaggedError("Failure")<{
  readonly message: string
  readonly hint: string | undefined
  readonly exitCode: number
}> {
  override get [Runtime.errorExitCode](): number {
    return this.exitCode
  }
  override readonly [Runtime.errorReported] = false
}

const statusByTag: ReadonlyMap<string, number> = new Map([
  ...Object.keys(ApiError.wire).map(Number).map((status) =>
    [ApiError.fromStatus(status as keyof typeof ApiError.wire, "")._tag, status] as const
  ),
  ["Conflict", 409] as const,
  ...Object.entries(InternError.codes).map(([tag, { status }]) => [tag, status] as const)
])

const exitCodeOf = (status: number): number =>
  status === 401 || status === 403
    ? ExitCode.auth
    : status === 404
    ? ExitCode.notFound
    : status === 402 || status === 429
    ? ExitCode.limit
    : status >= 500
    ? ExitCode.unavailable
    : ExitCode.refused

export interface Context {
  readonly baseUrl: string
  readonly hasKey: boolean
  /** The command that lists what the running command names (`switchyard providers list`), for a 404's hint. */
  readonly listCommand?: string
}

const metadataOf = (error: unknown): Record<string, unknown> =>
  typeof error === "object" && error !== null && "metadata" in error && typeof error.metadata === "object" && error.metadata !== null
    ? error.metadata as Record<string, unknown>
    : {}

const notFoundHint = (metadata: Record<string, unknown>, context: Context): string =>
  Array.isArray(metadata.disabled)
    ? "An instance administrator enables it again with `switchyard providers update SLUG --enable`; `switchyard providers list` shows every provider."
    : Array.isArray(metadata.candidates)
    ? "Every provider of this model is out for these preferences; `switchyard route explain` with the same flags shows why each one is."
    : typeof metadata.model === "string"
    ? "`switchyard models list` shows the models this gateway serves."
    : context.listCommand !== undefined
    ? `Check the name or id; \`${context.listCommand}\` shows what exists.`
    : "Check the name or id; `switchyard keys list`, `switchyard interns list` and `switchyard models list` show what exists."

const hintFor = (status: number, tag: string | undefined, context: Context, metadata: Record<string, unknown> = {}): string | undefined => {
  switch (status) {
    case 401:
      return context.hasKey
        ? "The key was refused (unknown, disabled or expired). Check --api-key or SWITCHYARD_API_KEY."
        : "No key was given. Pass --api-key KEY or set SWITCHYARD_API_KEY."
    case 403:
      return tag === "RegionalHostRefused"
        ? "Intern operations are refused on this hostname; use the gateway's main address."
        : "This key may not do that. Key management needs a management key (--api-key or SWITCHYARD_API_KEY)."
    case 402:
      return "Add credits (`switchyard credits add USD` with a management key) or raise the key's limit (`switchyard keys update HASH --limit USD`)."
    case 404:
      return tag === "NotFound"
        ? notFoundHint(metadata, context)
        : "Check the id; `switchyard interns list` shows the interns this key can see."
    case 409:
      return tag === "InternBusy"
        ? "The intern's status does not allow this now; check it with `switchyard interns get ID` and try again later."
        : undefined
    case 429:
      return "Rate limited even after waiting and retrying. Wait a minute, or lower --concurrency."
    default:
      return status >= 500
        ? "The gateway or its upstream failed even after retrying; try again later. The server log has the details."
        : undefined
  }
}

const fromStatus = (status: number, message: string, tag: string | undefined, context: Context, metadata?: Record<string, unknown>) =>
  new Failure({
    message: `${message} (HTTP ${status}${tag === undefined ? "" : ` ${tag}`})`,
    hint: hintFor(status, tag, context, metadata),
    exitCode: exitCodeOf(status)
  })

const bodyMessage = (text: string): string | undefined => {
  try {
    const body = JSON.parse(text) as { readonly error?: { readonly message?: unknown } }
    return typeof body.error?.message === "string" ? body.error.message : undefined
  } catch {
    return undefined
  }
}

const fromHttpClientError = Effect.fnUntraced(function*(error: HttpClientError.HttpClientError, context: Context) {
  const reason = error.reason
  if (reason._tag === "TransportError") {
    return new Failure({
      message: `Cannot reach the gateway at ${context.baseUrl}: ${reason.description ?? causeMessage(reason.cause)}`,
      hint: "Is it running (`pnpm start`)? Point --base-url or SWITCHYARD_BASE_URL at it.",
      exitCode: ExitCode.unavailable
    })
  }
  if (reason._tag === "InvalidUrlError") {
    return new Failure({ message: `Invalid URL: ${reason.description ?? ""}`, hint: undefined, exitCode: ExitCode.usage })
  }
  if (reason._tag === "EncodeError") {
    return new Failure({ message: `Could not encode the request: ${reason.message}`, hint: undefined, exitCode: ExitCode.usage })
  }
  const response = reason.response
  const text = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
  const message = bodyMessage(text) ?? (text.trim().length > 0 ? text.trim().slice(0, 300) : "no message")
  return fromStatus(response.status, message, undefined, context)
})

const causeMessage = (cause: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = cause
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    parts.push(current.message)
    current = current.cause
  }
  return parts.length === 0 ? "connection failed" : parts.join(": ")
}

const tagOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : undefined

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" && error.message.length > 0
    ? error.message
    : String(error)

export const describe = (error: unknown, context: Context): Effect.Effect<Failure> => {
  if (error instanceof Failure) return Effect.succeed(error)
  if (error instanceof Usage) {
    return Effect.succeed(new Failure({ message: error.message, hint: error.hint, exitCode: ExitCode.usage }))
  }
  if (CliError.isCliError(error)) {
    const implicitHelp = error._tag === "ShowHelp" && error.errors.length === 0
    return Effect.succeed(new Failure({ message: "", hint: undefined, exitCode: implicitHelp ? ExitCode.ok : ExitCode.usage }))
  }
  if (HttpClientError.isHttpClientError(error)) return fromHttpClientError(error, context)
  const tag = tagOf(error)
  if (tag === "InvalidClientOptions") {
    return Effect.succeed(new Failure({
      message: messageOf(error),
      hint: "Pass --base-url http://HOST:PORT/api/v1 or set SWITCHYARD_BASE_URL.",
      exitCode: ExitCode.usage
    }))
  }
  if (tag === "SchemaError") {
    return Effect.succeed(new Failure({
      message: `The gateway's answer does not match this client's contract: ${messageOf(error)}`,
      hint: "The client and the server may be different versions; update one of them.",
      exitCode: ExitCode.refused
    }))
  }
  const status = tag === undefined ? undefined : statusByTag.get(tag)
  if (status !== undefined) return Effect.succeed(fromStatus(status, messageOf(error), tag, context, metadataOf(error)))
  return Effect.succeed(new Failure({
    message: `Unexpected error: ${messageOf(error)}`,
    hint: "This is a bug in switchyard; please report it with the command you ran.",
    exitCode: ExitCode.refused
  }))
}

export const print = (failure: Failure) =>
  Effect.sync(() => {
    if (failure.message.length === 0) return
    const label = (text: string, style: "red" | "yellow") =>
      Output.stderrIsTerminal() ? Output.paint(["bold", style], text, process.stderr) : text
    process.stderr.write(`${label("error:", "red")} ${failure.message}\n`)
    if (failure.hint !== undefined) process.stderr.write(`${label("hint:", "yellow")}  ${failure.hint}\n`)
  })

export const context = (options: { readonly baseUrl: string; readonly apiKey: Option.Option<Redacted.Redacted<string>> }): Context => ({
  baseUrl: options.baseUrl,
  hasKey: Option.isSome(options.apiKey)
})

export const validate = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S,
  input: unknown,
  hint?: string
): Effect.Effect<S["Type"], Usage> =>
  Schema.decodeUnknownEffect(schema)(input, { errors: "all" }).pipe(
    Effect.mapError((error) => new Usage({ message: `Invalid input: ${error.message}`, ...(hint === undefined ? {} : { hint }) }))
  )
