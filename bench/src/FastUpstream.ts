import * as Http from "node:http"
import * as Listening from "./Listening.ts"

/**
 * An OpenAI-compatible embeddings upstream fast enough not to be the bottleneck: vectors are
 * computed once at start, their JSON text too, and each answer is assembled from those bytes. The
 * floats are float32 values printed the way the real API prints them (shortest round-trip decimal
 * of the float64 that holds them: `-0.006929283495992422`).
 */
export interface UpstreamOptions {
  readonly apiKey: string
  readonly width: number
  /** Upstream model names answered after a delay, in milliseconds. */
  readonly delays: Readonly<Record<string, number>>
  readonly maxInputs: number
}

const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) >>> 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/**
 * A unit-length float32 vector: real embeddings are normalised, so their components are small
 * (about 1/sqrt(width)) and print with the same number of digits as these.
 */
export const vectorFor = (index: number, width: number): Array<number> => {
  const random = mulberry32(0x9e3779b9 ^ Math.imul(index + 1, 0x85ebca6b))
  const raw = new Array<number>(width)
  let norm = 0
  for (let i = 0; i < width; i++) {
    const u = Math.max(random(), 1e-12)
    const value = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random())
    raw[i] = value
    norm += value * value
  }
  const scale = 1 / Math.sqrt(norm)
  return raw.map((x) => Math.fround(x * scale))
}

export const base64Of = (vector: ReadonlyArray<number>): string => {
  const bytes = Buffer.alloc(vector.length * 4)
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4)
  return bytes.toString("base64")
}

interface Parsed {
  readonly model: string
  readonly count: number
  readonly tokens: number
  readonly base64: boolean
}

const wordsOf = (text: string): number => {
  let words = 0
  let inWord = false
  for (let i = 0; i < text.length; i++) {
    const space = text.charCodeAt(i) <= 32
    if (!space && !inWord) words++
    inWord = !space
  }
  return Math.max(words, 1)
}

const parse = (raw: string): Parsed | string => {
  let body: unknown
  try {
    body = JSON.parse(raw)
  } catch {
    return "the body is not JSON"
  }
  if (typeof body !== "object" || body === null) return "the body is not an object"
  const { model, input, encoding_format } = body as { model?: unknown; input?: unknown; encoding_format?: unknown }
  if (typeof model !== "string") return "you must provide a model parameter"
  const texts = typeof input === "string" ? [input] : Array.isArray(input) ? input : undefined
  if (texts === undefined || texts.length === 0 || !texts.every((t) => typeof t === "string" && t.length > 0)) {
    return "'input' must be a non-empty string or an array of them"
  }
  return {
    model,
    count: texts.length,
    tokens: texts.reduce((n: number, t: string) => n + wordsOf(t), 0),
    base64: encoding_format === "base64"
  }
}

const errorBody = (message: string) =>
  Buffer.from(JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code: null } }))

export const start = (options: UpstreamOptions & { readonly port?: number }): Promise<Listening.Listening> => {
  const floatText: Array<Buffer> = []
  const base64Text: Array<Buffer> = []
  for (let i = 0; i < options.maxInputs; i++) {
    const vector = vectorFor(i, options.width)
    const head = `{"object":"embedding","index":${i},"embedding":`
    floatText.push(Buffer.from(`${head}${JSON.stringify(vector)}}`))
    base64Text.push(Buffer.from(`${head}"${base64Of(vector)}"}`))
  }
  const comma = Buffer.from(",")
  const cache = new Map<string, Buffer>()
  const answer = (parsed: Parsed): Buffer => {
    const key = `${parsed.model}|${parsed.count}|${parsed.tokens}|${parsed.base64}`
    const hit = cache.get(key)
    if (hit !== undefined) return hit
    const items = parsed.base64 ? base64Text : floatText
    const parts: Array<Buffer> = [Buffer.from(`{"object":"list","data":[`)]
    for (let i = 0; i < parsed.count; i++) {
      if (i > 0) parts.push(comma)
      parts.push(items[i]!)
    }
    parts.push(Buffer.from(
      `],"model":${JSON.stringify(parsed.model)},"usage":{"prompt_tokens":${parsed.tokens},"total_tokens":${parsed.tokens}}}`
    ))
    const body = Buffer.concat(parts)
    if (cache.size >= 256) cache.clear()
    cache.set(key, body)
    return body
  }
  const expected = `Bearer ${options.apiKey}`

  const send = (response: Http.ServerResponse, status: number, body: Buffer) => {
    response.writeHead(status, { "content-type": "application/json", "content-length": body.length })
    response.end(body)
  }

  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      if (request.method !== "POST" || !(request.url ?? "").endsWith("/embeddings")) {
        return send(response, 404, errorBody(`Unknown request URL: ${request.method} ${request.url}`))
      }
      if (request.headers.authorization !== expected) return send(response, 401, errorBody("Incorrect API key provided."))
      const parsed = parse(Buffer.concat(chunks).toString("utf8"))
      if (typeof parsed === "string") return send(response, 400, errorBody(parsed))
      if (parsed.count > options.maxInputs) return send(response, 400, errorBody(`at most ${options.maxInputs} inputs`))
      const body = answer(parsed)
      const delay = options.delays[parsed.model] ?? 0
      if (delay > 0) setTimeout(() => send(response, 200, body), delay)
      else send(response, 200, body)
    })
  })
  return Listening.listen(server, options.port)
}
