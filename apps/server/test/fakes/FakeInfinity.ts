import * as FakeRerank from "./FakeRerank.ts"
import * as FakeServedModels from "./FakeServedModels.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * Infinity (`infinity_emb v2`), from its OpenAPI reference: `POST /embeddings` in OpenAI's shape
 * (texts only) with `usage`, `POST /rerank` in Cohere's shape answering `results` of
 * `{ relevance_score, index, document }` and `usage`, `GET /models` listing each model with its
 * `capabilities` (`embed`, `rerank`), `GET /health` answering `{ "unix" }`. Errors are
 * `{ "error": { "message", "type", "param", "code" } }`; a malformed body is FastAPI's 422
 * `{ "detail": [...] }`.
 */
export interface Options {
  readonly served?: FakeServedModels.Served
  /** Started with `--api-key`: every route but `/health` asks for it as a bearer token. */
  readonly apiKey?: string
}

const error = (status: number, message: string) => ({
  status,
  body: { error: { message, type: status === 400 ? "BadRequest" : "InternalServerError", param: null, code: status } }
})

const validation = (field: string, message: string) => ({
  status: 422,
  body: { detail: [{ type: "value_error", loc: ["body", field], msg: message, input: null }] }
})

const defaultModels = (): FakeServedModels.Served =>
  new FakeServedModels.Served([
    { id: "BAAI/bge-small-en-v1.5", task: "embeddings", dimensions: 384 },
    { id: "mixedbread-ai/mxbai-rerank-xsmall-v1", task: "rerank" }
  ])

const api = (options: Options = {}): FakeUpstream.FakeApi => {
  const served = options.served ?? defaultModels()
  return {
    basePath: "",
    errorBody: (status, message) => error(status, message).body,
    handle: (request, shape) => {
      if (request.path !== "/health" && options.apiKey !== undefined && FakeUpstream.bearer(request) !== options.apiKey) {
        return { status: 401, body: { detail: "Unauthorized" } }
      }
      switch (`${request.method} ${request.path}`) {
        case "GET /health":
          return { status: 200, body: { unix: 1_767_225_600.5 } }
        case "GET /models":
          return {
            status: 200,
            body: {
              object: "list",
              data: served.models.map((m) => ({
                id: m.id,
                object: "model",
                owned_by: "infinity",
                created: 1_767_225_600,
                backend: "torch",
                capabilities: [m.task === "rerank" ? "rerank" : "embed"]
              }))
            }
          }
        case "POST /embeddings": {
          const body = request.body
          if (!FakeUpstream.isRecord(body)) return validation("input", "Input should be a valid dictionary")
          const input = typeof body.input === "string" ? [body.input] : body.input
          if (!Array.isArray(input) || input.length === 0 || !input.every((t) => typeof t === "string")) {
            return validation("input", "Input should be a valid list of strings")
          }
          const model = served.find(body.model, "embeddings")
          if (model === undefined) {
            return error(400, `model ${String(body.model)} not found; available models: ${served.models.map((m) => m.id).join(", ")}`)
          }
          return {
            status: 200,
            body: FakeServedModels.embeddingsAnswer(
              body,
              model,
              shape,
              input.map((text: string) => ({ seed: text, tokens: FakeUpstream.wordCount(text) + 2 })),
              { id: "infinity-0b9e3c1a", created: 1_767_225_600 }
            )
          }
        }
        case "POST /rerank": {
          const body = request.body
          if (FakeUpstream.isRecord(body) && served.find(body.model, "rerank") === undefined) {
            return error(400, `model ${String(body.model)} not found or not a reranker`)
          }
          const answer = FakeRerank.jina(body, shape, {}, error)
          return answer.status !== 200 ? answer : { status: 200, body: { object: "rerank", id: "infinity-9a1c", ...(answer.body as object) } }
        }
        default:
          return { status: 404, body: { detail: "Not Found" } }
      }
    }
  }
}

export const start = (options: Options & { readonly port?: number } = {}) =>
  FakeUpstream.start(api(options), options.port === undefined ? {} : { port: options.port })
