import * as FakeServedModels from "./FakeServedModels.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * Ollama, from its API reference: `POST /api/embed` with `model` and `input` (a string or a list)
 * answers `{ model, embeddings, total_duration, load_duration, prompt_eval_count }`; every error
 * is `{ "error": "..." }` (404 for a model not pulled, 400 for a bad body or a model that does not
 * embed). `GET /api/version` answers `{ "version" }`, `GET /api/tags` the models pulled.
 */
export interface Options {
  /** The embedding models pulled (a test may change them while the server runs); nomic-embed-text by default. */
  readonly served?: FakeServedModels.Served
  /** Chat models pulled too: listed by `/api/tags`, refused by `/api/embed`. */
  readonly chat?: ReadonlyArray<string>
  /** Answer without `prompt_eval_count`, as a server that skipped evaluation does. */
  readonly noCounts?: boolean
}

const error = (status: number, message: string) => ({ status, body: { error: message } })

const tag = (name: string) => ({
  name,
  model: name,
  modified_at: "2026-10-01T09:00:00.000Z",
  size: 274_302_450,
  digest: "0a109f422b47e3a30ba2b10eca18548e944e8a23073ee3f3e947efcf3c45e59f",
  details: { format: "gguf", family: "nomic-bert", parameter_size: "137M", quantization_level: "F16" }
})

const api = (options: Options = {}): FakeUpstream.FakeApi => {
  const served = options.served ?? new FakeServedModels.Served([{ id: "nomic-embed-text", task: "embeddings", dimensions: 768 }])
  return {
  basePath: "",
  errorBody: (status, message) => error(status, message).body,
  handle: (request, shape) => {
    if (request.method === "GET" && request.path === "/api/version") return { status: 200, body: { version: "0.12.3" } }
    if (request.method === "GET" && request.path === "/api/tags") {
      return { status: 200, body: { models: [...served.models.map((m) => m.id), ...(options.chat ?? [])].map(tag) } }
    }
    if (request.method !== "POST" || request.path !== "/api/embed") return error(404, "404 page not found")
    const body = request.body
    if (!FakeUpstream.isRecord(body)) return error(400, "invalid request body")
    if (typeof body.model !== "string") return error(400, "model is required")
    if (options.chat?.includes(body.model) === true) return error(400, `"${body.model}" does not support embeddings`)
    const model = served.find(body.model, "embeddings")
    if (model === undefined) {
      return error(404, `model "${body.model}" not found, try pulling it first`)
    }
    const input = typeof body.input === "string" ? [body.input] : body.input
    if (!Array.isArray(input) || !input.every((t) => typeof t === "string")) return error(400, "invalid input type")
    const width = shape.width ?? (typeof body.dimensions === "number" ? body.dimensions : model.dimensions ?? 768)
    const embeddings = input.map((text) => FakeUpstream.vectorFor(`${body.model}|${text}`, width))
    return {
      status: 200,
      body: {
        model: body.model,
        embeddings: shape.dropOne ? embeddings.slice(1) : embeddings,
        total_duration: 14_143_917,
        load_duration: 1_019_500,
        ...(options.noCounts === true ? {} : { prompt_eval_count: input.reduce((sum, text) => sum + FakeUpstream.wordCount(text) + 2, 0) })
      }
    }
  }
  }
}

export const start = (options: Options & { readonly port?: number } = {}) =>
  FakeUpstream.start(api(options), options.port === undefined ? {} : { port: options.port })
