import { Api } from "@switchyard/core/api/Api"
import { BadRequest, NotFound, PayloadTooLarge } from "@switchyard/core/schema/ApiError"
import * as Batch from "@switchyard/core/schema/Batch"
import { Clock, Duration, Effect, Option, Stream } from "effect"
import { Multipart } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import * as Crypto from "node:crypto"
import { BatchStore, type FileRow } from "../store/batches/BatchStore.ts"
import * as BatchWire from "../batches/BatchWire.ts"
import * as FileChunks from "../store/batches/FileChunks.ts"
import * as StoreFailure from "../http/StoreFailure.ts"
import { requireStandardKey } from "./ModelCall.ts"

const tooLarge = () =>
  new PayloadTooLarge({
    message: `The file exceeds ${Batch.limits.bytes} bytes (200 MB), the most a batch input file may hold`,
    metadata: { limit_bytes: Batch.limits.bytes }
  })

export const noSuchFile = (id: string) => new NotFound({ message: `No such File object: ${id}`, metadata: { file_id: id } })

const expiredFile = (row: FileRow) =>
  new NotFound({
    message: `File ${row.id} has expired: files are kept for a while after they are made (SWITCHYARD_BATCH_RETENTION), then deleted`,
    metadata: { file_id: row.id, expired: true }
  })

const fromMultipart = (error: Multipart.MultipartError) =>
  error.reason._tag === "BodyTooLarge" || error.reason._tag === "FileTooLarge"
    ? tooLarge()
    : new BadRequest({ message: `Invalid multipart body: ${error.reason._tag}` })

export const FilesHandlers = HttpApiBuilder.group(
  Api,
  "files",
  Effect.fn(function*(handlers) {
    const store = yield* BatchStore
    const retentionMs = Duration.toMillis(yield* BatchWire.Retention)
    const fileObject = (row: FileRow) => BatchWire.file(row, retentionMs)
    const owned = (workspaceId: string, id: string) =>
      Effect.flatMap(store.file(workspaceId, id), Option.match({
        onNone: () => Effect.fail(noSuchFile(id)),
        onSome: (row) => (row.status === "expired" ? Effect.fail(expiredFile(row)) : Effect.succeed(row))
      }))
    return handlers
      .handle("upload", ({ payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireStandardKey
          const id = `file-${Crypto.randomBytes(12).toString("hex")}`
          let purpose: string | undefined
          let upload: { readonly filename: string; readonly ingested: FileChunks.Ingested } | undefined
          const read = Stream.runForEach(payload, (part) => {
            if (Multipart.isField(part)) {
              if (part.key === "purpose") purpose = part.value
              return Effect.void
            }
            const file = part as Multipart.File
            if (file.key !== "file" || upload !== undefined) return Stream.runDrain(file.content)
            return FileChunks.ingest(file.content, {
              maxBytes: Batch.limits.bytes,
              tooLarge,
              write: (chunk) => store.insertChunk(id, chunk)
            }).pipe(Effect.tap((ingested) =>
              Effect.sync(() => {
                upload = { filename: file.name, ingested }
              })
            ))
          }).pipe(
            Effect.catchTag("MultipartError", (error) => Effect.fail(fromMultipart(error))),
            // A part is the file when it has a file name, whatever its type: by default the parser
            // reads a part typed like JSON (`application/jsonl`, as a browser's or curl's upload of
            // `corpus.jsonl` may say) as a form field.
            Effect.provideService(Multipart.FieldMimeTypes, [])
          )
          const checked = Effect.gen(function*() {
            yield* read
            if (purpose === undefined) {
              return yield* new BadRequest({ message: "Missing required parameter: 'purpose'", metadata: { param: "purpose" } })
            }
            if (purpose !== "batch") {
              return yield* new BadRequest({
                message: `Invalid value for 'purpose': '${purpose}'. This gateway takes files for batches only: 'batch'`,
                metadata: { param: "purpose" }
              })
            }
            if (upload === undefined) {
              return yield* new BadRequest({ message: "Missing required parameter: 'file'", metadata: { param: "file" } })
            }
            return upload
          })
          // Whatever was stored of a refused upload goes.
          const { filename, ingested } = yield* checked.pipe(Effect.onError(() => Effect.ignore(store.dropFile(id))))
          const row = {
            id,
            workspace_id: caller.workspaceId,
            purpose: "batch",
            filename,
            bytes: ingested.bytes,
            lines: ingested.lines,
            status: "processed",
            created_at: yield* Clock.currentTimeMillis
          }
          yield* store.insertFile(row).pipe(Effect.onError(() => Effect.ignore(store.dropFile(id))))
          return fileObject(row)
        })))
      .handle("list", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireStandardKey
          const limit = query.limit ?? 10_000
          const page = yield* store.files(caller.workspaceId, { after: query.after, limit, purpose: query.purpose })
          const data = page.rows.map(fileObject)
          return { object: "list" as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore }
        })))
      .handle("get", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireStandardKey
          return fileObject(yield* owned(caller.workspaceId, params.file_id))
        })))
      .handle("content", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireStandardKey
          const file = yield* owned(caller.workspaceId, params.file_id)
          return store.chunks(file.id).pipe(Stream.map((chunk) => Buffer.from(chunk.data, "utf8") as Uint8Array), Stream.orDie)
        })))
      .handle("delete", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireStandardKey
          const file = yield* owned(caller.workspaceId, params.file_id)
          yield* store.dropFile(file.id)
          return { id: file.id, object: "file" as const, deleted: true }
        })))
  })
)
