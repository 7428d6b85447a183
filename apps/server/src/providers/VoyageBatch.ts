import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import { Effect } from "effect"
import * as BatchHttp from "./BatchHttp.ts"
import { batchesApi, bearerPlacement, filesApi } from "./OpenAiBatch.ts"
import * as Voyage from "./Voyage.ts"
import * as WireFormat from "./WireFormat.ts"

/**
 * Voyage AI's Batch API as a provider batch wire format, under the provider's base URL
 * (`https://api.voyageai.com/v1`) with its bearer key. Its Files and Batch API follow OpenAI's,
 * with the model and the request parameters named once per batch: `POST /files` (multipart,
 * `purpose=batch`), `POST /batches` (`input_file_id`, `endpoint` `/v1/embeddings`,
 * `completion_window` `12h`, `request_params` with the model, `input_type`, `output_dimension`),
 * `GET /batches/{id}`, `POST /batches/{id}/cancel`, `GET /files/{id}/content`,
 * `DELETE /files/{id}`. A request line is `{ custom_id, body: { input } }`; a result line is
 * OpenAI's shape with Voyage's embeddings answer as its body, read by the live adapter's reader.
 */

// Voyage's published limits of one batch: 100,000 inputs, a 1 GB file.
const limits: BatchProvider.Limits = { maxRequests: 100_000, maxInputs: 100_000, maxBytes: 1_000_000_000, minRequests: 1 }

export const make = Effect.gen(function*() {
  const read = WireFormat.reader(Voyage.wireFormat)
  const provider: BatchProvider.BatchProvider = {
    ...batchesApi(filesApi(yield* BatchHttp.make, bearerPlacement), (input, job) => ({
      input_file_id: input,
      endpoint: "/v1/embeddings",
      completion_window: "12h",
      request_params: { model: job.model, ...job.params },
      metadata: { switchyard_job: job.name }
    })),
    limits,
    requests: (key, request) =>
      Effect.gen(function*() {
        const { path, body } = yield* Voyage.requestOf(request)
        if (path !== "/embeddings") return yield* WireFormat.unsupported("Voyage's Batch API embeds text here, not multimodal items")
        const { input, model: _, ...params } = body as { readonly input: unknown; readonly model: string }
        return { lines: [JSON.stringify({ custom_id: key, body: { input } })], job: { model: request.upstreamModel, params } }
      }),
    answer: (key, request, lookup) => BatchHttp.single(key, lookup, (body) => read(request, body))
  }
  return provider
})
