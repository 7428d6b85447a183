import * as FakeUpstream from "./FakeUpstream.ts"

export interface Options {
  readonly apiKey?: string
  readonly reportUsage?: boolean
}

const statusNames: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED"
}

export const taskTypes = new Set([
  "TASK_TYPE_UNSPECIFIED",
  "RETRIEVAL_QUERY",
  "RETRIEVAL_DOCUMENT",
  "SEMANTIC_SIMILARITY",
  "CLASSIFICATION",
  "CLUSTERING",
  "QUESTION_ANSWERING",
  "FACT_VERIFICATION",
  "CODE_RETRIEVAL_QUERY"
])

const errorBody = (status: number, message: string, details: ReadonlyArray<unknown> = []) => ({
  error: { code: status, message, status: statusNames[status] ?? "UNKNOWN", ...(details.length > 0 ? { details } : {}) }
})

const error = (status: number, message: string, details: ReadonlyArray<unknown> = []) => ({
  status,
  body: errorBody(status, message, details)
})

const path = /^\/v1beta\/models\/([^/:]+):batchEmbedContents$/u

const modalities: Record<string, string> = { image: "IMAGE", audio: "AUDIO", video: "VIDEO", application: "DOCUMENT" }

export const api = (options: Options = {}): FakeUpstream.FakeApi => ({
  basePath: "/v1beta",
  errorBody: (status, message) =>
    errorBody(
      status,
      message,
      status === 429 ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "7s" }] : []
    ),
  handle: (request, shape) => {
    const match = request.method === "POST" ? path.exec(request.path) : null
    if (match === null) return error(404, `Requested entity was not found.`)
    if (request.headers["x-goog-api-key"] !== (options.apiKey ?? "AIza-fake")) {
      return error(400, "API key not valid. Please pass a valid API key.", [
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com" }
      ])
    }
    const model = `models/${decodeURIComponent(match[1]!)}`
    const body = request.body
    if (!FakeUpstream.isRecord(body) || !Array.isArray(body.requests) || body.requests.length === 0) {
      return error(400, "requests must be a non-empty list")
    }
    const embeddings: Array<{ values: Array<number> }> = []
    const counts: Record<string, number> = {}
    for (const [index, entry] of body.requests.entries()) {
      if (!FakeUpstream.isRecord(entry) || entry.model !== model) {
        return error(400, `Model in request ${index} does not match the model in the URL.`)
      }
      if (entry.taskType !== undefined && !taskTypes.has(entry.taskType as string)) {
        return error(400, `Invalid value at 'requests[${index}].task_type'`)
      }
      const dims = entry.outputDimensionality
      if (dims !== undefined && !(Number.isInteger(dims) && (dims as number) > 0)) {
        return error(400, `Invalid value at 'requests[${index}].output_dimensionality'`)
      }
      const content = entry.content
      if (!FakeUpstream.isRecord(content) || !Array.isArray(content.parts) || content.parts.length === 0) {
        return error(400, `requests[${index}].content must have parts`)
      }
      for (const part of content.parts) {
        if (FakeUpstream.isRecord(part) && typeof part.text === "string") {
          counts.TEXT = (counts.TEXT ?? 0) + FakeUpstream.wordCount(part.text)
        } else if (
          FakeUpstream.isRecord(part) && FakeUpstream.isRecord(part.inline_data) &&
          typeof part.inline_data.mime_type === "string" && typeof part.inline_data.data === "string"
        ) {
          const modality = modalities[part.inline_data.mime_type.split("/")[0]!] ?? "DOCUMENT"
          counts[modality] = (counts[modality] ?? 0) + 258
        } else return error(400, `Invalid part in requests[${index}]`)
      }
      const width = shape.width ?? (dims as number | undefined) ?? 3072
      embeddings.push({ values: FakeUpstream.vectorFor(`${model}|${String(entry.taskType ?? "")}|${JSON.stringify(content.parts)}`, width) })
    }
    const prompt = Object.values(counts).reduce((a, b) => a + b, 0)
    return {
      status: 200,
      body: {
        embeddings: shape.dropOne ? embeddings.slice(1) : embeddings,
        ...(options.reportUsage === true
          ? {
            usageMetadata: {
              promptTokenCount: prompt,
              totalTokenCount: prompt,
              promptTokensDetails: Object.entries(counts).map(([modality, tokenCount]) => ({ modality, tokenCount }))
            }
          }
          : {})
      }
    }
  }
})

export const start = (options: Options & { readonly port?: number } = {}) =>
  FakeUpstream.start(api(options), options.port === undefined ? {} : { port: options.port })
