import { Option, Schema } from "effect"

export interface Details {
  readonly message?: string
  readonly code?: string
  readonly retryAfterMs?: number
}

export type Parser = (body: string) => Details

const Json = Schema.fromJsonString(Schema.Unknown)

const OpenAiShape = Schema.Struct({
  error: Schema.Union([
    Schema.String,
    Schema.Struct({
      message: Schema.optionalKey(Schema.NullOr(Schema.String)),
      type: Schema.optionalKey(Schema.NullOr(Schema.String)),
      code: Schema.optionalKey(Schema.NullOr(Schema.Union([Schema.String, Schema.Finite])))
    })
  ])
})

const MessageShape = Schema.Struct({
  message: Schema.Unknown,
  type: Schema.optionalKey(Schema.NullOr(Schema.String)),
  code: Schema.optionalKey(Schema.NullOr(Schema.Union([Schema.String, Schema.Finite])))
})

const DetailShape = Schema.Struct({ detail: Schema.Unknown })

const GoogleShape = Schema.Struct({
  error: Schema.Struct({
    code: Schema.optionalKey(Schema.Finite),
    message: Schema.optionalKey(Schema.String),
    status: Schema.optionalKey(Schema.String),
    details: Schema.optionalKey(Schema.Array(Schema.Struct({
      "@type": Schema.optionalKey(Schema.String),
      reason: Schema.optionalKey(Schema.String),
      retryDelay: Schema.optionalKey(Schema.String)
    })))
  })
})

const decodeJson = (body: string): Option.Option<unknown> => Schema.decodeUnknownOption(Json)(body)

const withShape = <S extends Schema.Codec<any, any, never, never>>(shape: S, f: (value: S["Type"]) => Details): Parser => (body) =>
  decodeJson(body).pipe(
    Option.flatMap(Schema.decodeUnknownOption(shape)),
    Option.map(f),
    Option.getOrElse((): Details => ({}))
  )

const compact = (details: { message?: string | undefined; code?: string | undefined; retryAfterMs?: number | undefined }): Details => {
  const out: { message?: string; code?: string; retryAfterMs?: number } = {}
  if (details.message !== undefined && details.message !== "") out.message = details.message
  if (details.code !== undefined && details.code !== "") out.code = details.code
  if (details.retryAfterMs !== undefined) out.retryAfterMs = details.retryAfterMs
  return out
}

const text = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (value === undefined || value === null) return undefined
  return JSON.stringify(value)
}

const codeText = (value: string | number | null | undefined): string | undefined =>
  value === null || value === undefined ? undefined : String(value)

export const openAi: Parser = withShape(OpenAiShape, ({ error }) =>
  typeof error === "string"
    ? compact({ message: error })
    : compact({ message: error.message ?? undefined, code: codeText(error.code) ?? error.type ?? undefined }))

export const message: Parser = withShape(MessageShape, (body) =>
  compact({ message: text(body.message), code: codeText(body.code) ?? body.type ?? undefined }))

export const detail: Parser = withShape(DetailShape, (body) => {
  const value = body.detail
  if (typeof value === "object" && value !== null && !Array.isArray(value) && "error" in value) {
    return compact({ message: text((value as { readonly error: unknown }).error) })
  }
  return compact({ message: text(value) })
})

const seconds = /^(\d+(?:\.\d+)?)s$/u

export const google: Parser = withShape(GoogleShape, ({ error }) => {
  const details = error.details ?? []
  const reason = details.find((d) => d["@type"]?.endsWith("google.rpc.ErrorInfo") && d.reason)?.reason
  const delay = details.find((d) => d["@type"]?.endsWith("google.rpc.RetryInfo") && d.retryDelay)?.retryDelay
  const match = delay === undefined ? null : seconds.exec(delay)
  return compact({
    message: error.message,
    code: reason ?? error.status,
    retryAfterMs: match ? Math.round(Number(match[1]) * 1000) : undefined
  })
})

export const firstOf = (...parsers: ReadonlyArray<Parser>): Parser => (body) => {
  for (const parse of parsers) {
    const details = parse(body)
    if (details.message !== undefined || details.code !== undefined) return details
  }
  return {}
}

export const any: Parser = firstOf(google, openAi, message, detail)
