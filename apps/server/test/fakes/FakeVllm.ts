import * as FakeRerank from "./FakeRerank.ts"
import * as FakeServedModels from "./FakeServedModels.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * vLLM's OpenAI-compatible server, from its API reference: `POST /v1/embeddings` (texts or token
 * ids) with `usage`, `POST /v1/rerank` in Jina's shape (`results`, `usage.total_tokens`),
 * `GET /v1/models` (`{ id, object, owned_by: "vllm", root, max_model_len }`), `GET /health` (200
 * and an empty body). Errors are `{ "object": "error", "message", "type", "param", "code" }`.
 */
export interface Options {
  readonly served?: FakeServedModels.Served
  readonly apiKey?: string
}

const error = (status: number, message: string) => ({
  status,
  body: {
    object: "error",
    message,
    type: status === 404 ? "NotFoundError" : status === 400 ? "BadRequestError" : "InternalServerError",
    param: null,
    code: status
  }
})

const defaultModels = (): FakeServedModels.Served =>
  new FakeServedModels.Served([
    { id: "intfloat/e5-small-v2", task: "embeddings", dimensions: 384 },
    { id: "BAAI/bge-reranker-v2-m3", task: "rerank" }
  ])

type Item = { readonly seed: string; readonly tokens: number }

const itemsOf = (input: unknown): ReadonlyArray<Item> | undefined => {
  const isTokens = (value: unknown): value is ReadonlyArray<number> => Array.isArray(value) && value.every(Number.isInteger)
  if (typeof input === "string") return [{ seed: input, tokens: FakeUpstream.wordCount(input) + 2 }]
  if (!Array.isArray(input) || input.length === 0) return undefined
  if (isTokens(input)) return [{ seed: `tokens:${input.join(",")}`, tokens: input.length }]
  const items: Array<Item> = []
  for (const entry of input as ReadonlyArray<unknown>) {
    if (typeof entry === "string") items.push({ seed: entry, tokens: FakeUpstream.wordCount(entry) + 2 })
    else if (isTokens(entry)) items.push({ seed: `tokens:${entry.join(",")}`, tokens: entry.length })
    else return undefined
  }
  return items
}

const api = (options: Options = {}): FakeUpstream.FakeApi => {
  const served = options.served ?? defaultModels()
  return {
    basePath: "",
    errorBody: (status, message) => error(status, message).body,
    handle: (request, shape) => {
      if (request.path === "/health" && request.method === "GET") return { status: 200, body: null }
      if (options.apiKey !== undefined && FakeUpstream.bearer(request) !== options.apiKey) return { status: 401, body: { error: "Unauthorized" } }
      switch (`${request.method} ${request.path}`) {
        case "GET /v1/models":
          return {
            status: 200,
            body: {
              object: "list",
              data: served.models.map((m) => ({
                id: m.id,
                object: "model",
                created: 1_767_225_600,
                owned_by: "vllm",
                root: m.id,
                parent: null,
                max_model_len: 512,
                permission: []
              }))
            }
          }
        case "POST /v1/embeddings": {
          const body = request.body
          if (!FakeUpstream.isRecord(body)) return error(400, "invalid JSON body")
          const model = served.find(body.model, "embeddings")
          if (model === undefined) return error(404, `The model \`${String(body.model)}\` does not exist.`)
          const items = itemsOf(body.input)
          if (items === undefined) return error(400, "Input should be a valid string or list of token ids")
          return {
            status: 200,
            body: FakeServedModels.embeddingsAnswer(body, model, shape, items, { id: "embd-5f2c", created: 1_767_225_600 })
          }
        }
        case "POST /v1/rerank": {
          const body = request.body
          if (FakeUpstream.isRecord(body) && served.find(body.model, "rerank") === undefined) {
            return error(404, `The model \`${String(body.model)}\` does not exist.`)
          }
          const answer = FakeRerank.jina(body, shape, {}, error)
          return answer.status !== 200 ? answer : { status: 200, body: { id: "rerank-77d1", ...(answer.body as object) } }
        }
        default:
          return error(404, `Not Found: ${request.method} ${request.path}`)
      }
    }
  }
}

export const start = (options: Options & { readonly port?: number } = {}) =>
  FakeUpstream.start(api(options), options.port === undefined ? {} : { port: options.port })
