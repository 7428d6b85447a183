import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * The rerank APIs of the fakes: Cohere's v2 (`/v2/rerank`, search units), Voyage's (`/v1/rerank`,
 * `data` and tokens) and Jina's shape (`/v1/rerank`, `results` and tokens, which OpenAI-compatible
 * hosts share). A document's score is the share of the query's words it contains, plus a small
 * deterministic part from its text, so relevant documents rank first and ties are rare.
 */
export interface Options {
  /** Refuse calls with more documents than this (400), as providers cap one call. */
  readonly maxDocuments?: number
}

const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])

export const scoreOf = (query: string, document: string): number => {
  const asked = words(query)
  const has = words(document)
  let shared = 0
  for (const word of asked) if (has.has(word)) shared += 1
  const jitter = FakeUpstream.vectorFor(document, 1)[0]!
  return Math.round(((asked.size === 0 ? 0 : shared / asked.size) * 0.9 + (jitter + 1) * 0.05) * 1e6) / 1e6
}

type Reply = { readonly status: number; readonly body: unknown }

interface Asked {
  readonly model: string
  readonly query: string
  readonly documents: ReadonlyArray<string>
  readonly body: Record<string, unknown>
}

const read = (body: unknown, options: Options): Asked | string => {
  if (!FakeUpstream.isRecord(body) || typeof body.model !== "string") return "model is required"
  if (typeof body.query !== "string" || body.query === "") return "query is required"
  const documents = body.documents
  if (!Array.isArray(documents) || documents.length === 0) return "documents must be a non-empty array"
  const texts: Array<string> = []
  for (const d of documents) {
    if (typeof d === "string") texts.push(d)
    // An image document is scored on its text and its image reference (a URL or base64 data).
    else if (FakeUpstream.isRecord(d) && (typeof d.text === "string" || typeof d.image === "string")) {
      texts.push([d.text, d.image].filter((part) => typeof part === "string").join(" "))
    }
    else return "documents must be strings"
  }
  if (options.maxDocuments !== undefined && texts.length > options.maxDocuments) {
    return `too many documents: ${texts.length} > ${options.maxDocuments}`
  }
  return { model: body.model, query: body.query, documents: texts, body }
}

const scored = (asked: Asked, dropOne: boolean | undefined) => {
  const all = asked.documents
    .map((document, index) => ({ index, relevance_score: scoreOf(asked.query, document) }))
    .sort((a, b) => b.relevance_score - a.relevance_score)
  return dropOne === true ? all.slice(1) : all
}

const tokens = (asked: Asked) =>
  asked.documents.reduce((sum, d) => sum + FakeUpstream.wordCount(asked.query) + FakeUpstream.wordCount(d), 0)

export const cohere = (
  body: unknown,
  shape: { readonly dropOne?: boolean },
  options: Options,
  error: (status: number, message: string) => Reply
): Reply => {
  const asked = read(body, options)
  if (typeof asked === "string") return error(400, `invalid request: ${asked}`)
  const maxTokens = asked.body.max_tokens_per_doc
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && (maxTokens as number) > 0)) {
    return error(400, "invalid request: max_tokens_per_doc must be a positive integer")
  }
  return {
    status: 200,
    body: {
      id: `fake-rerank-${asked.documents.length}`,
      results: scored(asked, shape.dropOne),
      meta: { api_version: { version: "2" }, billed_units: { search_units: Math.ceil(asked.documents.length / 100) } }
    }
  }
}

export const voyage = (
  body: unknown,
  shape: { readonly dropOne?: boolean },
  options: Options,
  error: (status: number, message: string) => Reply
): Reply => {
  const asked = read(body, options)
  if (typeof asked === "string") return error(400, asked)
  return {
    status: 200,
    body: { object: "list", data: scored(asked, shape.dropOne), model: asked.model, usage: { total_tokens: tokens(asked) } }
  }
}

export const jina = (
  body: unknown,
  shape: { readonly dropOne?: boolean },
  options: Options & { readonly reportUsage?: boolean },
  error: (status: number, message: string) => Reply
): Reply => {
  const asked = read(body, options)
  if (typeof asked === "string") return error(400, asked)
  const withDocuments = asked.body.return_documents !== false
  return {
    status: 200,
    body: {
      model: asked.model,
      results: scored(asked, shape.dropOne).map((r) =>
        withDocuments ? { ...r, document: { text: asked.documents[r.index] } } : r
      ),
      ...(options.reportUsage === false ? {} : { usage: { total_tokens: tokens(asked) } })
    }
  }
}
