import * as FakeRerank from "./FakeRerank.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

export interface Options extends FakeRerank.Options {
  readonly apiKey?: string
  /** The most tokens (words) one text may have; absent, no limit. */
  readonly maxTokens?: number
}

const imagePixels = 560 * 400
const videoPixels = 560 * 1200
const pixelsPerToken = 560

const error = (status: number, message: string) => ({ status, body: { detail: message } })

type Item = { readonly seed: string; readonly tokens: number; readonly image: number; readonly video: number }

const segment = (part: unknown): { tokens: number; image: number; video: number } | undefined => {
  if (!FakeUpstream.isRecord(part)) return undefined
  switch (part.type) {
    case "text":
      return typeof part.text === "string" ? { tokens: FakeUpstream.wordCount(part.text), image: 0, video: 0 } : undefined
    case "image_url":
      return typeof part.image_url === "string" && /^https?:\/\//u.test(part.image_url) ? { tokens: 0, image: imagePixels, video: 0 } : undefined
    case "image_base64":
      return typeof part.image_base64 === "string" && /^data:image\/[a-z]+;base64,/u.test(part.image_base64)
        ? { tokens: 0, image: imagePixels, video: 0 }
        : undefined
    case "video_url":
      return typeof part.video_url === "string" ? { tokens: 0, image: 0, video: videoPixels } : undefined
    case "video_base64":
      return typeof part.video_base64 === "string" && /^data:video\/[a-z0-9]+;base64,/u.test(part.video_base64)
        ? { tokens: 0, image: 0, video: videoPixels }
        : undefined
    default:
      return undefined
  }
}

const common = (body: Record<string, unknown>): string | undefined => {
  if (typeof body.model !== "string") return "model is required"
  if (body.input_type !== undefined && body.input_type !== null && body.input_type !== "query" && body.input_type !== "document") {
    return "input_type must be null, 'query' or 'document'"
  }
  if (body.output_dimension !== undefined && body.output_dimension !== null && !Number.isInteger(body.output_dimension)) {
    return "output_dimension must be an integer"
  }
  return undefined
}

const vectors = (model: string, inputType: unknown, items: ReadonlyArray<Item>, width: number, base64: boolean, dtype: string) =>
  items.map((item, index) => {
    const vector = FakeUpstream.vectorFor(`${model}|${String(inputType ?? "")}|${item.seed}`, width)
    return { object: "embedding", embedding: base64 ? FakeUpstream.float32Base64(vector) : FakeUpstream.ofType(vector, dtype), index }
  })

const dtypes = new Set(["float", "int8", "uint8", "binary", "ubinary"])

export const api = (options: Options = {}): FakeUpstream.FakeApi => ({
  basePath: "/v1",
  errorBody: (status, message) => error(status, message).body,
  handle: (request, shape) => {
    const multimodal = request.path === "/v1/multimodalembeddings"
    const rerank = request.path === "/v1/rerank"
    if (request.method !== "POST" || (!multimodal && !rerank && request.path !== "/v1/embeddings")) return error(404, "Not Found")
    if (FakeUpstream.bearer(request) !== (options.apiKey ?? "pa-fake")) return error(401, "Provided API key is invalid.")
    if (rerank) return FakeRerank.voyage(request.body, shape, options, error)
    const body = request.body
    if (!FakeUpstream.isRecord(body)) return error(400, "Request body is not JSON")
    const problem = common(body)
    if (problem !== undefined) return error(400, problem)
    const items: Array<Item> = []
    if (multimodal) {
      if (!Array.isArray(body.inputs) || body.inputs.length === 0) return error(400, "inputs must be a non-empty list")
      if (body.output_encoding !== undefined && body.output_encoding !== null && body.output_encoding !== "base64") {
        return error(400, "output_encoding must be null or 'base64'")
      }
      for (const input of body.inputs) {
        if (!FakeUpstream.isRecord(input) || !Array.isArray(input.content) || input.content.length === 0) {
          return error(400, "each input needs a non-empty content list")
        }
        let tokens = 0
        let image = 0
        let video = 0
        for (const part of input.content) {
          const counted = segment(part)
          if (counted === undefined) return error(400, `invalid content segment: ${JSON.stringify(part).slice(0, 80)}`)
          tokens += counted.tokens
          image += counted.image
          video += counted.video
        }
        items.push({ seed: JSON.stringify(input.content), tokens, image, video })
      }
    } else {
      const input = typeof body.input === "string" ? [body.input] : body.input
      if (!Array.isArray(input) || input.length === 0 || !input.every((t) => typeof t === "string")) {
        return error(400, "input must be a string or a list of strings")
      }
      if (body.encoding_format !== undefined && body.encoding_format !== null && body.encoding_format !== "base64") {
        return error(400, "encoding_format must be null or 'base64'")
      }
      // `truncation` (default true) cuts a text's end at the model's context length; false refuses it.
      const max = options.maxTokens
      for (const [index, text] of (input as ReadonlyArray<string>).entries()) {
        if (max !== undefined && FakeUpstream.wordCount(text) > max && body.truncation === false) {
          return error(400, `Request to model '${String(body.model)}' failed. The example at index ${index} in your batch has too many tokens and does not fit into the model's context length of ${max} tokens. Please reduce the length of the example, or set truncation=True.`)
        }
        const kept = max === undefined ? text : FakeUpstream.cutWords(text, max, "end")
        items.push({ seed: kept, tokens: FakeUpstream.wordCount(kept), image: 0, video: 0 })
      }
    }
    const width = shape.width ?? (body.output_dimension as number | undefined) ?? 1024
    const base64 = multimodal ? body.output_encoding === "base64" : body.encoding_format === "base64"
    const dtype = body.output_dtype ?? "float"
    if (typeof dtype !== "string" || !dtypes.has(dtype)) return error(400, "output_dtype must be float, int8, uint8, binary or ubinary")
    const textTokens = items.reduce((sum, item) => sum + item.tokens, 0)
    const image = items.reduce((sum, item) => sum + item.image, 0)
    const video = items.reduce((sum, item) => sum + item.video, 0)
    const total = textTokens + Math.ceil((image + video) / pixelsPerToken)
    return {
      status: 200,
      body: {
        object: "list",
        data: vectors(body.model as string, body.input_type, shape.dropOne ? items.slice(1) : items, width, base64, dtype),
        model: body.model,
        usage: multimodal
          ? { text_tokens: textTokens, image_pixels: image, ...(video > 0 ? { video_pixels: video } : {}), total_tokens: total }
          : { total_tokens: total }
      }
    }
  }
})

export const start = (options: Options & { readonly port?: number } = {}) =>
  FakeUpstream.start(api(options), options.port === undefined ? {} : { port: options.port })
