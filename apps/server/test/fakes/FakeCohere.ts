import * as FakeRerank from "./FakeRerank.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

export interface Options extends FakeRerank.Options {
  readonly apiKey?: string
  /** The most tokens (words) one text may have; absent, no limit. */
  readonly maxTokens?: number
}

const modelWidths: Record<string, number> = {
  "embed-v4.0": 1536,
  "embed-english-v3.0": 1024,
  "embed-multilingual-v3.0": 1024,
  "embed-english-light-v3.0": 384
}

const inputTypes = new Set(["search_document", "search_query", "classification", "clustering", "image"])
const embeddingTypes = new Set(["float", "int8", "uint8", "binary", "ubinary", "base64"])
const imageTokens = 1000

const error = (status: number, message: string) => ({ status, body: { id: "fake-error", message } })

type Item = { readonly seed: string; readonly tokens: number; readonly images: number }

const dataUrl = /^data:image\/[a-z]+;base64,/u

const itemsOf = (body: Record<string, unknown>): ReadonlyArray<Item> | string => {
  const given = ["texts", "images", "inputs"].filter((key) => body[key] !== undefined)
  if (given.length !== 1) return "invalid request: exactly one of texts, images or inputs must be given"
  if (Array.isArray(body.texts) && body.texts.every((t) => typeof t === "string")) {
    return body.texts.map((text: string) => ({ seed: text, tokens: FakeUpstream.wordCount(text), images: 0 }))
  }
  if (Array.isArray(body.images) && body.images.every((i) => typeof i === "string" && dataUrl.test(i))) {
    return body.images.map((image: string) => ({ seed: image, tokens: 0, images: 1 }))
  }
  if (Array.isArray(body.inputs)) {
    const items: Array<Item> = []
    for (const input of body.inputs) {
      if (!FakeUpstream.isRecord(input) || !Array.isArray(input.content) || input.content.length === 0) {
        return "invalid request: each input needs a content array"
      }
      let tokens = 0
      let images = 0
      for (const part of input.content) {
        if (FakeUpstream.isRecord(part) && part.type === "text" && typeof part.text === "string") {
          tokens += FakeUpstream.wordCount(part.text)
        } else if (
          FakeUpstream.isRecord(part) && part.type === "image_url" && FakeUpstream.isRecord(part.image_url) &&
          typeof part.image_url.url === "string" && dataUrl.test(part.image_url.url)
        ) {
          images += 1
        } else return "invalid request: content parts are text or image_url with a data URI"
      }
      items.push({ seed: JSON.stringify(input.content), tokens, images })
    }
    return items
  }
  return "invalid request: texts, images or inputs is malformed"
}

const api = (options: Options = {}): FakeUpstream.FakeApi => ({
  basePath: "/v2",
  errorBody: (status, message) => error(status, message).body,
  handle: (request, shape) => {
    const rerank = request.path === "/v2/rerank"
    if (request.method !== "POST" || (!rerank && request.path !== "/v2/embed")) return error(404, "not found")
    if (FakeUpstream.bearer(request) !== (options.apiKey ?? "co-fake")) return error(401, "invalid api token")
    if (rerank) return FakeRerank.cohere(request.body, shape, options, error)
    const body = request.body
    if (!FakeUpstream.isRecord(body) || typeof body.model !== "string") return error(400, "invalid request: model is required")
    if (typeof body.input_type !== "string" || !inputTypes.has(body.input_type)) {
      return error(400, "invalid request: input_type must be one of search_document, search_query, classification, clustering, image")
    }
    const types = body.embedding_types ?? ["float"]
    if (!Array.isArray(types) || types.length === 0 || !types.every((t) => embeddingTypes.has(t as string))) {
      return error(400, "invalid request: embedding_types is invalid")
    }
    const truncate = body.truncate ?? "END"
    if (truncate !== "NONE" && truncate !== "START" && truncate !== "END") return error(400, "invalid request: truncate must be NONE, START or END")
    const max = options.maxTokens
    if (max !== undefined && Array.isArray(body.texts)) {
      const texts = body.texts as Array<unknown>
      if (truncate === "NONE") {
        const long = texts.find((t) => typeof t === "string" && FakeUpstream.wordCount(t) > max)
        if (typeof long === "string") {
          return error(400, `too many tokens: total number of tokens in the prompt cannot exceed ${max} - received ${FakeUpstream.wordCount(long)}. Try using a shorter prompt, or enabling prompt truncating.`)
        }
      } else body.texts = texts.map((t) => typeof t === "string" ? FakeUpstream.cutWords(t, max, truncate === "START" ? "start" : "end") : t)
    }
    const items = itemsOf(body)
    if (typeof items === "string") return error(400, items)
    const width = shape.width ?? (body.output_dimension as number | undefined) ?? modelWidths[body.model] ?? 1024
    const vectors = (shape.dropOne ? items.slice(1) : items).map((item) =>
      FakeUpstream.vectorFor(`${body.model}|${body.input_type}|${item.seed}`, width)
    )
    const embeddings: Record<string, unknown> = {}
    for (const type of types as ReadonlyArray<string>) {
      if (type === "float") embeddings.float = vectors
      else if (type === "base64") embeddings.base64 = vectors.map(FakeUpstream.float32Base64)
      else embeddings[type] = vectors.map((v) => FakeUpstream.ofType(v, type))
    }
    const inputTokens = items.reduce((sum, item) => sum + item.tokens, 0)
    const images = items.reduce((sum, item) => sum + item.images, 0)
    return {
      status: 200,
      body: {
        id: `fake-${request.raw.length}`,
        embeddings,
        ...(Array.isArray(body.texts) ? { texts: body.texts } : {}),
        meta: {
          api_version: { version: "2" },
          billed_units: { input_tokens: inputTokens, ...(images > 0 ? { image_tokens: images * imageTokens } : {}) }
        },
        response_type: "embeddings_by_type"
      }
    }
  }
})

export const start = (options: Options & { readonly port?: number } = {}) =>
  FakeUpstream.start(api(options), options.port === undefined ? {} : { port: options.port })
