import { Api } from "@switchyard/core/api/Api"
import type { CohereEmbedByType, CohereEmbedFloats, CohereEmbedV2Request, CohereEmbeddingType } from "@switchyard/core/schema/CohereEmbed"
import type { CohereRerankResponse } from "@switchyard/core/schema/CohereRerank"
import { BadRequest } from "@switchyard/core/schema/ApiError"
import type { EmbeddingRequest } from "@switchyard/core/schema/EmbeddingRequest"
import * as OutputDtype from "@switchyard/core/vectors/OutputDtype"
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import type { Served } from "../embeddings/Embeddings.ts"
import * as VectorEncoding from "../providers/VectorEncoding.ts"
import { Rerank } from "../rerank/Rerank.ts"
import { wholeCall } from "./Embeddings.ts"
import { serveWith } from "./Rerank.ts"

type CohereEmbed = Omit<CohereEmbedV2Request, "output_dimension" | "inputs" | "max_tokens" | "priority"> & Partial<Pick<CohereEmbedV2Request, "output_dimension" | "inputs">>

const quantized = (types: ReadonlyArray<CohereEmbeddingType>): ReadonlyArray<OutputDtype.QuantizedDtype> =>
  types.filter((t): t is OutputDtype.QuantizedDtype => t !== "float" && t !== "base64")

/**
 * Cohere's embed request as a `POST /embeddings` one: its inputs (`texts`, `images` as image
 * parts, or v2's `inputs` as they are), `output_dimension` as `dimensions`, `truncate` with
 * Cohere's default `END`. One quantized type is asked as `output_dtype` (the provider's own where
 * it makes it); several types come from one answer in floats, each made by the gateway.
 */
const asEmbeddingRequest = (payload: CohereEmbed, types: ReadonlyArray<CohereEmbeddingType>): EmbeddingRequest | string => {
  const given = [payload.texts, payload.images, payload.inputs].filter((x) => x !== undefined)
  if (given.length !== 1) return "give exactly one of texts, images or inputs"
  const input: EmbeddingRequest["input"] = payload.texts !== undefined
    ? payload.texts
    : payload.images !== undefined
    ? payload.images.map((url) => ({ content: [{ type: "image_url" as const, image_url: { url } }] }))
    : payload.inputs!.map((item) => ({ content: item.content }))
  const only = types.length === 1 ? quantized(types)[0] : undefined
  return {
    input,
    model: payload.model,
    ...(payload.input_type !== undefined ? { input_type: payload.input_type } : {}),
    ...(payload.output_dimension !== undefined ? { dimensions: payload.output_dimension } : {}),
    ...(only !== undefined ? { output_dtype: only } : {}),
    truncate: payload.truncate === "NONE" ? "none" : payload.truncate === "START" ? "start" : "end"
  }
}

/** The served vectors, one list per type asked, as Cohere answers them. */
const byType = (served: Served, request: EmbeddingRequest, types: ReadonlyArray<CohereEmbeddingType>): CohereEmbedByType["embeddings"] => {
  const data = [...served.data].sort((a, b) => a.index - b.index)
  const floats = request.output_dtype === undefined ? data.map((d) => VectorEncoding.readFloats(d.embedding)) : []
  const out: Record<string, unknown> = {}
  for (const type of new Set(types)) {
    if (type === request.output_dtype) out[type] = data.map((d) => Array.from(VectorEncoding.readFloats(d.embedding)))
    else if (type === "float") out.float = floats.map((f) => Array.from(f))
    else if (type === "base64") out.base64 = floats.map((f) => VectorEncoding.toBase64(Array.from(f)))
    else out[type] = floats.map((f) => Array.from(OutputDtype.fromFloats(f, type)))
  }
  return out
}

const meta = (served: Served) => ({ api_version: { version: "2" }, billed_units: { input_tokens: served.promptTokens } })

/**
 * Cohere's routes: v2 rerank (the request read as a `POST /rerank` whose documents are not
 * echoed, `priority` not used), v2 and v1 embed (`schema/CohereEmbed`).
 */
export const CohereHandlers = HttpApiBuilder.group(
  Api,
  "cohere",
  Effect.fn(function*(handlers) {
    const rerank = serveWith(yield* Rerank, yield* CurrentCatalog)
    const embed = yield* wholeCall
    const embedded = (payload: CohereEmbed, version: "v1" | "v2") =>
      Effect.gen(function*() {
        const headers = (yield* HttpServerRequest.HttpServerRequest).headers
        const types = payload.embedding_types ?? ["float"]
        const request = asEmbeddingRequest(payload, types)
        if (typeof request === "string") {
          return yield* new BadRequest({ message: `Invalid request body: ${request}`, metadata: { field: "texts" } })
        }
        const answer = yield* embed(request, headers)
        const { served } = answer
        const texts = payload.texts ?? []
        if (version === "v1" && payload.embedding_types === undefined) {
          const floats: CohereEmbedFloats = {
            id: served.id,
            response_type: "embeddings_floats",
            embeddings: byType(served, request as EmbeddingRequest, ["float"]).float ?? [],
            texts,
            meta: meta(served)
          }
          return HttpServerResponse.jsonUnsafe(floats, { headers: answer.headers }) as never
        }
        const body: CohereEmbedByType = {
          id: served.id,
          response_type: "embeddings_by_type",
          embeddings: byType(served, request, types),
          texts,
          meta: meta(served)
        }
        return HttpServerResponse.jsonUnsafe(body, { headers: answer.headers }) as never
      })
    return handlers
      .handle("rerank", ({ payload }) =>
        Effect.gen(function*() {
          const { priority: _, ...rest } = payload
          const answer = yield* rerank({ ...rest, return_documents: false }, (yield* HttpServerRequest.HttpServerRequest).headers)
          const { served } = answer
          const cohere: CohereRerankResponse = {
            id: served.id,
            results: served.results.map((r) => ({ index: r.index, relevance_score: r.relevance_score })),
            meta: { api_version: { version: "2" }, billed_units: { search_units: served.searchUnits } }
          }
          return HttpServerResponse.jsonUnsafe(cohere, { headers: answer.headers }) as never
        }))
      .handle("embedV2", ({ payload }) => embedded(payload, "v2"))
      .handle("embedV1", ({ payload }) => embedded(payload, "v1"))
  })
)
