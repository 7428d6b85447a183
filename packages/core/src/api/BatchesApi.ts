/**
 * OpenAI's Batch API: `POST /batches`, `GET /batches`, `GET /batches/{batch_id}` and
 * `POST /batches/{batch_id}/cancel`, for `/v1/embeddings` and `/v1/rerank`.
 *
 * **Details**
 *
 * Each line of the input file is a real request of the batch creator's key: routed, cached,
 * limited and charged as a live call, one generation id per served line. Standard keys only; a
 * batch belongs to the key's workspace, and any other workspace's key gets 404 for it.
 *
 * @since 0.4.0
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import { BatchList, BatchObject, CreateBatch, CreateBatchHeaders, ListQuery } from "../schema/Batch.ts"
import { Authorization } from "./Authorization.ts"

const errors = [wire[400], wire[403], wire[404], wire[429], wire[500], wire[503]]

const BatchParams = { batch_id: Schema.String }

/**
 * @since 0.4.0
 */
export class BatchesApi extends HttpApiGroup.make("batches")
  .add(
    HttpApiEndpoint.post("create", "/batches", { payload: CreateBatch, headers: CreateBatchHeaders, success: BatchObject, error: errors }),
    HttpApiEndpoint.get("list", "/batches", { query: ListQuery, success: BatchList, error: errors }),
    HttpApiEndpoint.get("get", "/batches/:batch_id", { params: BatchParams, success: BatchObject, error: errors }),
    HttpApiEndpoint.post("cancel", "/batches/:batch_id/cancel", { params: BatchParams, success: BatchObject, error: errors })
  )
  .middleware(Authorization)
{}
