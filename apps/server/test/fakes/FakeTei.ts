import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * Hugging Face Text Embeddings Inference, from its OpenAPI reference: `POST /embed` answers a bare
 * list of vectors and no counts, `POST /tokenize` the tokens of each input, `POST /rerank` a list
 * of `{ index, score }`. Errors are `{ "error", "error_type" }`: 413 past the batch size, 422 for a
 * bad input, 424 when the model fails, 429 when the queue is full. `GET /info` names the model the
 * server runs and its kind (`model_type`), `GET /health` answers 200.
 */
export interface Options {
  readonly apiKey?: string
  readonly maxBatch?: number
  /** What `GET /info` says the server runs (a test may change it: a server restarted with another model). */
  readonly info?: Info
  /** The model's `max_input_length` (default 512), special tokens included. */
  readonly maxInputLength?: number
}

/** The parts of TEI's `GET /info` the gateway reads. */
interface Info {
  model_id: string
  model_type: "embedding" | "reranker" | "classifier"
}

const infoBody = (info: Info, maxBatch: number, maxInputLength: number) => ({
  model_id: info.model_id,
  model_sha: null,
  model_dtype: "float32",
  model_type: info.model_type === "embedding"
    ? { embedding: { pooling: "cls" } }
    : info.model_type === "reranker"
    ? { reranker: { id2label: { "0": "LABEL_0" }, label2id: { LABEL_0: 0 } } }
    : { classifier: { id2label: { "0": "NEGATIVE", "1": "POSITIVE" }, label2id: { NEGATIVE: 0, POSITIVE: 1 } } },
  max_concurrent_requests: 512,
  max_input_length: maxInputLength,
  max_batch_tokens: 16384,
  max_client_batch_size: maxBatch,
  tokenization_workers: 2,
  version: "1.8.0"
})

const errorTypes: Readonly<Record<number, string>> = {
  401: "Unhealthy",
  404: "Validation",
  413: "Validation",
  422: "Validation",
  424: "Backend",
  429: "Overloaded"
}

const error = (status: number, message: string) => ({ status, body: { error: message, error_type: errorTypes[status] ?? "Backend" } })

// The fake tokenizer: `[CLS]`, one token per word (with its byte offsets), `[SEP]`.
const tokensOf = (text: string) => {
  const bytes = Buffer.from(text, "utf8")
  const words: Array<{ id: number; text: string; special: boolean; start: number; stop: number }> = []
  let i = 0
  while (i < bytes.length) {
    while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x09)) i++
    const start = i
    while (i < bytes.length && bytes[i] !== 0x20 && bytes[i] !== 0x0a && bytes[i] !== 0x09) i++
    if (i > start) words.push({ id: 1000 + words.length, text: bytes.toString("utf8", start, i), special: false, start, stop: i })
  }
  return [
    { id: 101, text: "[CLS]", special: true, start: 0, stop: 0 },
    ...words,
    { id: 102, text: "[SEP]", special: true, start: 0, stop: 0 }
  ]
}

// What the model reads of a text: cut to `max` tokens (special ones included) on the side asked.
const truncated = (text: string, max: number, direction: unknown) => {
  const tokens = tokensOf(text).filter((t) => !t.special)
  if (tokens.length + 2 <= max) return text
  const kept = direction === "Left" ? tokens.slice(tokens.length - (max - 2)) : tokens.slice(0, max - 2)
  return Buffer.from(text, "utf8").toString("utf8", kept[0]!.start, kept.at(-1)!.stop)
}

const inputsOf = (body: unknown, field: string): ReadonlyArray<string> | undefined => {
  if (!FakeUpstream.isRecord(body)) return undefined
  const inputs = typeof body[field] === "string" ? [body[field]] : body[field]
  return Array.isArray(inputs) && inputs.length > 0 && inputs.every((t) => typeof t === "string") ? inputs : undefined
}

const api = (options: Options = {}): FakeUpstream.FakeApi => ({
  basePath: "",
  errorBody: (status, message) => error(status, message).body,
  handle: (request, shape) => {
    if (options.apiKey !== undefined && FakeUpstream.bearer(request) !== options.apiKey) return error(401, "Unauthorized")
    const maxBatch = options.maxBatch ?? 32
    switch (`${request.method} ${request.path}`) {
      case "POST /embed": {
        const inputs = inputsOf(request.body, "inputs")
        if (inputs === undefined) return error(422, "`inputs` cannot be empty")
        if (inputs.length > maxBatch) return error(413, `batch size ${inputs.length} > maximum allowed batch size ${maxBatch}`)
        const body = request.body as Record<string, unknown>
        const max = options.maxInputLength ?? 512
        if (body.truncate !== true) {
          const long = inputs.map((text) => tokensOf(text).length).find((n) => n > max)
          if (long !== undefined) return error(413, `Input validation error: \`inputs\` must have less than ${max} tokens. Given: ${long}`)
        }
        const width = shape.width ?? (typeof body.dimensions === "number" ? body.dimensions : 384)
        const vectors = inputs.map((text) => FakeUpstream.vectorFor(body.truncate === true ? truncated(text, max, body.truncation_direction) : text, width))
        return { status: 200, body: shape.dropOne ? vectors.slice(1) : vectors }
      }
      case "POST /tokenize": {
        const inputs = inputsOf(request.body, "inputs")
        if (inputs === undefined) return error(422, "`inputs` cannot be empty")
        if (inputs.length > maxBatch) return error(413, `batch size ${inputs.length} > maximum allowed batch size ${maxBatch}`)
        return {
          status: 200,
          body: inputs.map(tokensOf)
        }
      }
      case "POST /rerank": {
        const texts = inputsOf(request.body, "texts")
        const query = FakeUpstream.isRecord(request.body) ? request.body.query : undefined
        if (texts === undefined || typeof query !== "string") return error(422, "`query` and `texts` are required")
        const scores = texts.map((text, index) => ({ index, score: FakeUpstream.vectorFor(`${query}|${text}`, 1)[0]! / 2 + 0.5 }))
        return { status: 200, body: scores.sort((a, b) => b.score - a.score) }
      }
      case "GET /health":
        return { status: 200, body: null }
      case "GET /info":
        return { status: 200, body: infoBody(options.info ?? { model_id: "BAAI/bge-small-en-v1.5", model_type: "embedding" }, maxBatch, options.maxInputLength ?? 512) }
      default:
        return error(404, "Not Found")
    }
  }
})

export const start = (options: Options & { readonly port?: number } = {}) =>
  FakeUpstream.start(api(options), options.port === undefined ? {} : { port: options.port })
