import * as FakeRerank from "./FakeRerank.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

/** An OpenAI-compatible host; its `/v1/rerank` speaks Jina's shape (Jina, vLLM, TEI). */
export interface Options extends FakeRerank.Options {
  /** The key it takes (`sk-fake` when absent), or the keys: an old and a new one while a key is rotated. */
  readonly apiKey?: string | ReadonlyArray<string>
  readonly defaultWidth?: number
  readonly reportUsage?: boolean
  /** Refuse multimodal input objects, as OpenAI's own API does (it takes strings and token ids). */
  readonly textOnly?: boolean
  /** The `id` every embeddings answer carries (none when absent, as some hosts send none). */
  readonly responseId?: string
  /**
   * The models' revision, read at each request: a host that updates a model behind the same name
   * answers other vectors for the same input from then on.
   */
  revision?: string
  /** The most tokens (words) one text may have; absent, no limit. */
  readonly maxTokens?: number
}

const modelWidths: Record<string, number> = {
  "text-embedding-3-small": 1536,
  "text-embedding-3-large": 3072,
  "text-embedding-ada-002": 1536
}

const error = (status: number, message: string, code: string | null = null) => ({
  status,
  body: { error: { message, type: status === 429 ? "rate_limit_exceeded" : "invalid_request_error", param: null, code } }
})

type Item = { readonly seed: string; readonly tokens: number; readonly images: number }

const itemsOf = (input: unknown): Array<Item> | undefined => {
  const isTokens = (value: unknown): value is ReadonlyArray<number> =>
    Array.isArray(value) && value.every((n) => Number.isInteger(n))
  if (typeof input === "string") return [{ seed: input, tokens: FakeUpstream.wordCount(input), images: 0 }]
  if (!Array.isArray(input) || input.length === 0) return undefined
  if (isTokens(input)) return [{ seed: `tokens:${input.join(",")}`, tokens: input.length, images: 0 }]
  const items: Array<Item> = []
  for (const entry of input as ReadonlyArray<unknown>) {
    if (typeof entry === "string") items.push({ seed: entry, tokens: FakeUpstream.wordCount(entry), images: 0 })
    else if (isTokens(entry)) items.push({ seed: `tokens:${entry.join(",")}`, tokens: entry.length, images: 0 })
    else if (FakeUpstream.isRecord(entry) && Array.isArray(entry.content) && entry.content.length > 0) {
      let tokens = 0
      let images = 0
      for (const part of entry.content) {
        if (!FakeUpstream.isRecord(part)) return undefined
        if (part.type === "text" && typeof part.text === "string") tokens += FakeUpstream.wordCount(part.text)
        else if (part.type === "image_url") images += 1
        else return undefined
      }
      items.push({ seed: JSON.stringify(entry.content), tokens, images })
    } else return undefined
  }
  return items
}

export const api = (options: Options = {}): FakeUpstream.FakeApi => ({
  basePath: "/v1",
  errorBody: (status, message) => error(status, message).body,
  handle: (request, shape) => {
    const rerank = request.path === "/v1/rerank"
    if (request.method !== "POST" || (!rerank && request.path !== "/v1/embeddings")) {
      return error(404, `Unknown request URL: ${request.method} ${request.path}`, "unknown_url")
    }
    if (![options.apiKey ?? "sk-fake"].flat().includes(FakeUpstream.bearer(request) ?? "")) {
      return error(401, "Incorrect API key provided.", "invalid_api_key")
    }
    if (rerank) return FakeRerank.jina(request.body, shape, options, (status, message) => error(status, message))
    const body = request.body
    if (!FakeUpstream.isRecord(body) || typeof body.model !== "string") return error(400, "you must provide a model parameter")
    const items = itemsOf(body.input)
    if (items === undefined) return error(400, "'input' is invalid")
    if (options.textOnly === true && Array.isArray(body.input) && body.input.some(FakeUpstream.isRecord)) {
      return error(400, "'input' is invalid")
    }
    const dimensions = body.dimensions ?? body.output_dimension
    if (dimensions !== undefined && !(Number.isInteger(dimensions) && (dimensions as number) > 0)) {
      return error(400, "'dimensions' must be a positive integer")
    }
    // OpenAI refuses a text over the limit; Jina (`truncate`) cuts its end when told to.
    const max = options.maxTokens
    if (max !== undefined && Array.isArray(body.input)) {
      const long = (body.input as Array<unknown>).findIndex((t) => typeof t === "string" && FakeUpstream.wordCount(t) > max)
      if (long !== -1 && body.truncate !== true) {
        return error(400, body.truncate === false
          ? `Input text at position ${long} exceeds the maximum context length of ${max} tokens; set truncate to true to cut it.`
          : `Invalid 'input[${long}]': maximum input length is ${max} tokens.`)
      }
      if (long !== -1) {
        const cut = (body.input as Array<string>).map((t) => FakeUpstream.cutWords(t, max, "end"))
        items.splice(0, items.length, ...itemsOf(cut)!)
      }
    }
    const width = shape.width ?? (dimensions as number | undefined) ?? modelWidths[body.model] ?? options.defaultWidth ?? 16
    const base64 = body.encoding_format === "base64" || body.embedding_type === "base64"
    const packedType = body.embedding_type === "binary" || body.embedding_type === "ubinary" ? body.embedding_type : undefined
    const kept = shape.dropOne ? items.slice(1) : items
    const promptTokens = items.reduce((sum, item) => sum + item.tokens + item.images * 85, 0)
    const imageTokens = items.reduce((sum, item) => sum + item.images * 85, 0)
    return {
      status: 200,
      body: {
        ...(options.responseId === undefined ? {} : { id: options.responseId }),
        object: "list",
        data: kept.map((item, index) => {
          const vector = FakeUpstream.vectorFor(
            `${body.model}|${item.seed}${options.revision === undefined ? "" : `|${options.revision}`}`,
            width
          )
          return {
            object: "embedding",
            index,
            embedding: base64 ? FakeUpstream.float32Base64(vector) : packedType !== undefined ? FakeUpstream.ofType(vector, packedType) : vector
          }
        }),
        model: body.model,
        ...(options.reportUsage === false ? {} : {
          usage: {
            prompt_tokens: promptTokens,
            total_tokens: promptTokens,
            ...(imageTokens > 0 ? { prompt_tokens_details: { text_tokens: promptTokens - imageTokens, image_tokens: imageTokens } } : {})
          }
        })
      }
    }
  }
})

export const start = (options: Options & { readonly port?: number } = {}) =>
  FakeUpstream.start(api(options), options.port === undefined ? {} : { port: options.port })
