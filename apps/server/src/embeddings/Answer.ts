import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import * as Money from "@switchyard/core/catalog/Money"
import * as EmbeddingRequestSchema from "@switchyard/core/schema/EmbeddingRequest"
import { ignoredParameters, report } from "../pipeline/Route.ts"
import { type ApiError, statusOf } from "@switchyard/core/schema/ApiError"
import * as VectorEncoding from "../providers/VectorEncoding.ts"
import type { Served } from "./Settlement.ts"

type EmbeddingRequest = EmbeddingRequestSchema.EmbeddingRequest

/**
 * The answer of a served embeddings request, for the live route and a batch's output line alike.
 */

const modalityDetails = (served: Served) => {
  const tokens = served.modalityTokens
  if (tokens === undefined) return undefined
  const details = Object.fromEntries(Object.entries(tokens).filter(([, n]) => typeof n === "number" && n > 0))
  return Object.keys(details).length === 0 ? undefined : details
}

/**
 * The response body as its parts, in order, and their length: vectors forwarded from the upstream
 * are views of the upstream's bytes (no copy), other vectors are serialised once; nothing passes
 * through a schema. A large answer is written to the socket part by part ({@link body} joins them).
 */
export const parts = (served: Served, request: EmbeddingRequest, explain: boolean): { readonly chunks: ReadonlyArray<Uint8Array>; readonly length: number } => {
  const chunks: Array<Uint8Array> = [listHead]
  items(chunks, served.data, 0, true)
  chunks.push(tail(served, request, explain))
  return { chunks, length: chunks.reduce((n, chunk) => n + chunk.length, 0) }
}

/**
 * Pushes the list items of `data` to `chunks`, their indices moved by `offset`; `first` when they
 * open the list (no comma before the first). An answer written as its pieces return
 * (`Streamed.ts`) makes the same bytes as {@link parts}: the head, each piece's items, the tail.
 */
export const items = (chunks: Array<Uint8Array>, data: ReadonlyArray<VectorEncoding.Forwarded>, offset: number, first: boolean): void => {
  for (const [position, d] of data.entries()) {
    chunks.push(position === 0 && first ? itemHead : nextItemHead)
    const vector = d.embedding
    chunks.push(vector instanceof VectorEncoding.ForwardedVector ? vector.json : Buffer.from(JSON.stringify(vector), "latin1"))
    chunks.push(Buffer.from(`,"index":${d.index + offset}}`, "latin1"))
  }
}

/** The answer's tail after its items: the list closed, then usage and the extensions. */
export const tail = (served: Served, request: EmbeddingRequest, explain: boolean): Uint8Array =>
  // The envelope is an object's JSON: its opening brace becomes the comma after the list.
  Buffer.from(`],${JSON.stringify(envelope(served, request, explain)).slice(1)}`, "utf8")

/**
 * The tail of an answer that failed after its first bytes were written: the list closed, then
 * the spec's error object in place of usage (`{"object":"list","data":[…],"error":{…}}`).
 */
export const errorTail = (error: ApiError): Uint8Array =>
  Buffer.from(
    `],"error":${
      JSON.stringify({ code: statusOf(error), message: error.message, ...(error.metadata === undefined ? {} : { metadata: error.metadata }) })
    }}`,
    "utf8"
  )

/** The response body as one array of bytes: {@link parts} joined. */
export const body = (served: Served, request: EmbeddingRequest, explain: boolean): Uint8Array => {
  const { chunks, length } = parts(served, request, explain)
  return Buffer.concat(chunks, length)
}

/**
 * The response body as text, for a batch's output line, which is text: the same JSON as
 * {@link body}, each forwarded vector read once from the upstream's bytes into the string,
 * without a copy of the whole body as bytes first.
 */
export const text = (served: Served, request: EmbeddingRequest, explain: boolean): string => {
  const rest = JSON.stringify(envelope(served, request, explain))
  let out = listHeadText
  for (const [position, d] of served.data.entries()) {
    const vector = d.embedding
    const json = vector instanceof VectorEncoding.ForwardedVector
      ? Buffer.from(vector.json.buffer, vector.json.byteOffset, vector.json.byteLength).toString("latin1")
      : JSON.stringify(vector)
    out += `${position === 0 ? itemHeadText : `,${itemHeadText}`}${json},"index":${d.index}}`
  }
  return `${out}],${rest.slice(1)}`
}

const listHeadText = `{"object":"list","data":[`
const itemHeadText = `{"object":"embedding","embedding":`
/** The answer's first bytes: the list opened. */
export const listHead = Buffer.from(`{"object":"list","data":[`, "latin1")
const itemHead = Buffer.from(`{"object":"embedding","embedding":`, "latin1")
const nextItemHead = Buffer.from(`,{"object":"embedding","embedding":`, "latin1")

// Everything of the response but its list of vectors.
const envelope = (served: Served, request: EmbeddingRequest, explain: boolean) => {
  const upstreamCost = Money.toNumber(served.upstreamCostAtto)
  const details = multiModal(request) ? modalityDetails(served) : undefined
  const ignored = ignoredParameters(served.plan, served.endpoint, EmbeddingRequestSchema.sentParameters(request))
  return {
    model: served.model,
    id: served.id,
    provider: served.provider,
    usage: {
      prompt_tokens: served.promptTokens,
      total_tokens: served.totalTokens,
      cost: creditsFromNanos(served.costNanos),
      cost_details: {
        upstream_inference_prompt_cost: upstreamCost,
        upstream_inference_completions_cost: 0,
        upstream_inference_cost: upstreamCost
      },
      is_byok: served.isByok,
      ...(details === undefined ? {} : { prompt_tokens_details: details }),
      ...(served.tokensEstimated === true ? { tokens_estimated: true } : {})
    },
    ...(served.vectorSpaceChange !== undefined || explain || ignored.length > 0 || served.cache.items > 0
      ? {
        switchyard: {
          ...(served.cache.items > 0
            ? { cache: { status: served.cache.outcome, items: served.cache.items, tokens: served.cache.tokens } }
            : {}),
          ...(served.vectorSpaceChange !== undefined ? { vector_space_change: served.vectorSpaceChange } : {}),
          ...(ignored.length > 0 ? { ignored_parameters: ignored } : {}),
          ...(explain ? { routing: { ...report(served.plan), tried: served.attempts } } : {})
        }
      }
      : {})
  }
}

const multiModal = (request: EmbeddingRequest) => EmbeddingRequestSchema.inputModalities(request).length >= 2
