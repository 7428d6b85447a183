import { EmbeddingProvider } from "@switchyard/core"
import * as SearchUnits from "@switchyard/core/catalog/SearchUnits"
import type * as RerankProvider from "@switchyard/core/providers/RerankProvider"
import { Effect } from "effect"
import { fnv1a } from "./Fnv1a.ts"
import * as MediaData from "./MediaData.ts"
import * as TokenEstimate from "./TokenEstimate.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as WireFormat from "./WireFormat.ts"
import * as Span from "../instrumentation/Span.ts"

const defaultDimensions = 256
const maxDimensions = 8192

const mix = (value: number): number => {
  let h = value
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

const add = (vector: Array<number>, feature: string, weight: number) => {
  const hash = mix(fnv1a(feature))
  const sign = (mix(hash ^ 0x9e3779b9) & 1) === 0 ? 1 : -1
  vector[hash % vector.length]! += sign * weight
}

const magnitude = (vector: ReadonlyArray<number>) => Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0))

// Signed features can cancel out; a fallback feature keeps every vector at unit length.
const normalize = (vector: Array<number>, fallback: string): ReadonlyArray<number> => {
  if (magnitude(vector) === 0) add(vector, fallback, 1)
  const norm = magnitude(vector)
  return vector.map((x) => Math.fround(x / norm))
}

// Signed feature hashing of words, word pairs and character trigrams, scaled to unit length.
export const embedText = (text: string, dimensions: number): ReadonlyArray<number> => {
  const vector = new Array<number>(dimensions).fill(0)
  const words = TokenEstimate.tokenize(text.normalize("NFKC").toLowerCase())
  for (const [i, word] of words.entries()) {
    add(vector, `w:${word}`, 1)
    if (i > 0) add(vector, `b:${words[i - 1]} ${word}`, 0.5)
    const padded = `<${word}>`
    for (let j = 0; j + 3 <= padded.length; j++) add(vector, `c:${padded.slice(j, j + 3)}`, 0.25)
  }
  return normalize(vector, `e:${text}`)
}

export const embedTokens = (tokens: ReadonlyArray<number>, dimensions: number): ReadonlyArray<number> => {
  const vector = new Array<number>(dimensions).fill(0)
  for (const [i, token] of tokens.entries()) {
    add(vector, `t:${token}`, 1)
    if (i > 0) add(vector, `tb:${tokens[i - 1]},${token}`, 0.5)
  }
  return normalize(vector, `t:${tokens.join(",")}`)
}


const unsupported = WireFormat.unsupported

export const make = (options?: { readonly dimensions?: number }) => {
  const embed = Effect.fnUntraced(function*(
    _connection: EmbeddingProvider.Connection,
    request: EmbeddingProvider.UpstreamRequest
  ) {
    const dimensions = request.dimensions ?? options?.dimensions ?? defaultDimensions
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > maxDimensions) {
      return yield* unsupported(`the local model produces 1 to ${maxDimensions} dimensions, not ${dimensions}`)
    }
    const vectors: Array<ReadonlyArray<number>> = []
    let tokens = 0
    switch (request.input._tag) {
      case "Texts":
        for (const text of request.input.texts) {
          vectors.push(embedText(text, dimensions))
          tokens += TokenEstimate.ofText(text)
        }
        break
      case "Tokens":
        for (const ids of request.input.tokens) {
          vectors.push(embedTokens(ids, dimensions))
          tokens += ids.length
        }
        break
      case "Multimodal":
        for (const [index, parts] of request.input.items.entries()) {
          const texts: Array<string> = []
          for (const part of parts) {
            if (part.type !== "text") {
              return yield* unsupported(`input ${index}: the local model embeds text only, not ${MediaData.partKind(part)}`)
            }
            texts.push(part.text)
          }
          const text = texts.join("\n")
          vectors.push(embedText(text, dimensions))
          tokens += TokenEstimate.ofText(text)
        }
        break
    }
    const embeddings = yield* VectorEncoding.finish(request, vectors.map((value, index) => ({ index, value })))
    return { embeddings, promptTokens: tokens, totalTokens: tokens } satisfies EmbeddingProvider.EmbeddingResult
  }, Span.within("Local.embed"))
  return EmbeddingProvider.EmbeddingProvider.of({ embed })
}

const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => {
  let dot = 0
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!
  return dot
}

const firstTokens = (text: string, limit: number | undefined) =>
  limit === undefined ? text : TokenEstimate.tokenize(text).slice(0, limit).join(" ")

/**
 * `switchyard/local-rerank`: each document scored by the cosine of its `local-embed` vector with
 * the query's (unit vectors, so the dot product), clamped to 0..1. Tokens are counted as
 * providers that bill rerank by tokens count them: the query once per document, plus every
 * document.
 */
export const makeRerank = (): RerankProvider.RerankProvider => ({
  rerank: Effect.fnUntraced(function*(
    _connection: EmbeddingProvider.Connection,
    request: RerankProvider.UpstreamRerank
  ) {
    const withImage = request.documents.findIndex((d) => d.image !== undefined)
    if (withImage !== -1) return yield* unsupported(`document ${withImage} has an image; the local model ranks text only`)
    const query = embedText(request.query, defaultDimensions)
    const texts = request.documents.map((document) => firstTokens(document.text ?? "", request.maxTokensPerDoc))
    const scores = texts.map((text, index) => {
      const score = Math.min(1, Math.max(0, cosine(query, embedText(text, defaultDimensions))))
      return { index, relevance_score: Math.round(score * 1e6) / 1e6 }
    })
    const totalTokens = SearchUnits.tokensOfCall(TokenEstimate.ofText(request.query), texts.map(TokenEstimate.ofText))
    return { scores, searchUnits: undefined, totalTokens } satisfies RerankProvider.RerankResult
  }, Span.within("Local.rerank"))
})
