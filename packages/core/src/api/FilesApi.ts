/**
 * OpenAI's Files API, for batch input and output: `POST /files` (multipart: `file`, `purpose`
 * `batch`), `GET /files`, `GET /files/{file_id}`, `GET /files/{file_id}/content` and
 * `DELETE /files/{file_id}`.
 *
 * **Details**
 *
 * Standard keys only; a file belongs to the key's workspace, and any other workspace's key gets
 * 404 for it. The upload is streamed into the store: at most `Batch.limits.bytes` (200 MB).
 *
 * @since 0.4.0
 */
import { Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import { FileDeleted, FileList, FileObject, limits, ListQuery } from "../schema/Batch.ts"
import { Authorization } from "./Authorization.ts"

const errors = [wire[400], wire[403], wire[404], wire[413], wire[429], wire[500], wire[503]]

const FileParams = { file_id: Schema.String }

/**
 * The upload's form: the JSONL `file` and its `purpose`.
 *
 * @since 0.4.0
 */
const UploadForm = Schema.Struct({ purpose: Schema.String, file: Multipart.SingleFileSchema }).pipe(
  HttpApiSchema.asMultipartStream({ maxTotalSize: limits.bytes + 1024 * 1024, maxParts: 8 })
)

/**
 * @since 0.4.0
 */
export class FilesApi extends HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.post("upload", "/files", { payload: UploadForm, success: FileObject, error: errors }),
    HttpApiEndpoint.get("list", "/files", { query: ListQuery, success: FileList, error: errors }),
    HttpApiEndpoint.get("get", "/files/:file_id", { params: FileParams, success: FileObject, error: errors }),
    HttpApiEndpoint.get("content", "/files/:file_id/content", {
      params: FileParams,
      success: HttpApiSchema.StreamUint8Array({ contentType: "application/jsonl" }),
      error: errors
    }),
    HttpApiEndpoint.delete("delete", "/files/:file_id", { params: FileParams, success: FileDeleted, error: errors })
  )
  .middleware(Authorization)
{}
