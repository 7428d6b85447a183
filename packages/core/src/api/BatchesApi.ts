/**
 * OpenAI's Batch API: `POST /batches`, `GET /batches`, `GET /batches/{batch_id}` and
 * `POST /batches/{batch_id}/cancel`, for `/v1/embeddings` and `/v1/rerank`.
 *
 * **Details**
 *
 * Each line of the input file is a real request of the batch creator's key: routed, cached,
 * limited and charged as a live call, one generation id per served line. A standard key creates
 * batches and lists, reads and cancels its workspace's; a management key lists, reads and cancels
 * its workspace's, and an instance administrator's every workspace's (`workspace_id` filters the
 * list). Any other key gets 404 for a batch.
 *
 * @since 0.4.0
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import { BatchList, BatchListQuery, BatchObject, CreateBatch, CreateBatchHeaders } from "../schema/Batch.ts"
import { Authorization } from "./Authorization.ts"

const errors = [wire[400], wire[403], wire[404], wire[429], wire[500], wire[503]]

const BatchParams = { batch_id: Schema.String }

/**
 * @since 0.4.0
 */
export class BatchesApi extends HttpApiGroup.make("batches")
  .add(
    HttpApiEndpoint.post("create", "/batches", { payload: CreateBatch, headers: CreateBatchHeaders, success: BatchObject, error: errors }),
    HttpApiEndpoint.get("list", "/batches", { query: BatchListQuery, success: BatchList, error: errors }),
    HttpApiEndpoint.get("get", "/batches/:batch_id", { params: BatchParams, success: BatchObject, error: errors }),
    HttpApiEndpoint.post("cancel", "/batches/:batch_id/cancel", { params: BatchParams, success: BatchObject, error: errors })
  )
  .middleware(Authorization)
{}
