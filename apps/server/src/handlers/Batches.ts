import { Api } from "@switchyard/core/api/Api"
import * as Batch from "@switchyard/core/schema/Batch"
import { BadRequest, NotFound } from "@switchyard/core/schema/ApiError"
import { Clock, Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import * as Crypto from "node:crypto"
import { type BatchRow, BatchStore } from "../store/batches/BatchStore.ts"
import { ProviderBatchStore } from "../store/batches/ProviderBatchStore.ts"
import * as BatchWire from "../batches/BatchWire.ts"
import * as StoreFailure from "../http/StoreFailure.ts"
import { noSuchFile } from "./Files.ts"
import { requireStandardKey } from "./ModelCall.ts"
import { Caller } from "@switchyard/core/api/Authorization"
import { Administrators } from "../auth/Administrators.ts"
import { AuditLog } from "../store/audit/AuditLog.ts"

const window24h = 24 * 60 * 60 * 1000

const noSuchBatch = (id: string) => new NotFound({ message: `No such Batch object: ${id}`, metadata: { batch_id: id } })

const hex = (bytes: number) => Crypto.randomBytes(bytes).toString("hex")

export const BatchesHandlers = HttpApiBuilder.group(
  Api,
  "batches",
  Effect.fn(function*(handlers) {
    const store = yield* BatchStore
    const providerJobs = yield* ProviderBatchStore
    const administrators = yield* Administrators
    /** Batches as objects, with the jobs their lines went to at providers' batch APIs. */
    const objects = (rows: ReadonlyArray<BatchRow>) =>
      Effect.map(providerJobs.jobsOf(rows.map((r) => r.id)), (jobs) =>
        rows.map((row) => BatchWire.batch(row, jobs.filter((job) => job.batch_id === row.id))))
    const object = (row: BatchRow) => Effect.map(objects([row]), (all) => all[0]!)
    const audit = yield* AuditLog
    const owned = (workspaceId: string, id: string) =>
      Effect.flatMap(store.batch(workspaceId, id), Option.match({ onNone: () => Effect.fail(noSuchBatch(id)), onSome: Effect.succeed }))
    /**
     * Which batches the caller oversees: a standard or management key its own workspace's; an
     * instance administrator's management key every workspace's (`undefined`).
     */
    const oversight = Effect.gen(function*() {
      const caller = yield* Caller
      const everything = caller.kind === "management" && (yield* administrators.isAdministrator(caller))
      return { caller, scope: everything ? undefined : caller.workspaceId }
    })
    const overseen = (id: string) =>
      Effect.gen(function*() {
        const { caller, scope } = yield* oversight
        const batch = scope === undefined
          ? Option.getOrUndefined(yield* store.batchById(id))
          : Option.getOrUndefined(yield* store.batch(scope, id))
        if (batch === undefined) return yield* noSuchBatch(id)
        return { caller, batch }
      })
    return handlers
      .handle("create", ({ headers, payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireStandardKey
          // Live calls only, or provider batches where an endpoint has a batch price (ProviderBatches.ts).
          const execution = headers[Batch.executionHeader] ?? "auto"
          const input = yield* store.file(caller.workspaceId, payload.input_file_id)
          if (Option.isNone(input) || input.value.status !== "processed") return yield* noSuchFile(payload.input_file_id)
          if (input.value.purpose !== "batch") {
            return yield* new BadRequest({
              message: `The input file ${payload.input_file_id} was not uploaded with purpose 'batch'`,
              metadata: { param: "input_file_id" }
            })
          }
          const now = yield* Clock.currentTimeMillis
          const id = `batch_${hex(12)}`
          const row = {
            id,
            workspace_id: caller.workspaceId,
            key_id: caller.keyId,
            key_hash: caller.keyHash,
            user_id: caller.userId,
            endpoint: payload.endpoint,
            input_file_id: payload.input_file_id,
            completion_window: payload.completion_window,
            execution,
            metadata: payload.metadata === undefined || payload.metadata === null ? null : JSON.stringify(payload.metadata),
            status: "validating" as const,
            output_file_id: `file-${hex(12)}`,
            error_file_id: `file-${hex(12)}`,
            errors: null,
            total: 0,
            completed: 0,
            failed: 0,
            cost_nanos: 0,
            created_at: now,
            expires_at: now + window24h,
            in_progress_at: null,
            finalizing_at: null,
            completed_at: null,
            failed_at: null,
            expired_at: null,
            cancelling_at: null,
            cancelled_at: null
          }
          yield* store.insertBatch(row)
          return BatchWire.batch(row)
        })))
      .handle("list", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const { caller, scope } = yield* oversight
          const requested = query.workspace_id?.toLowerCase()
          if (requested !== undefined && scope !== undefined && requested !== scope) {
            return yield* new NotFound({ message: `No workspace ${query.workspace_id} for this key`, metadata: { workspace_id: query.workspace_id } })
          }
          const workspace = caller.kind === "standard" ? caller.workspaceId : requested ?? scope
          const page = yield* store.batches(workspace, { after: query.after, limit: query.limit ?? 20 })
          const data = yield* objects(page.rows)
          return { object: "list" as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore }
        })))
      .handle("get", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          return yield* object((yield* overseen(params.batch_id)).batch)
        })))
      .handle("cancel", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const { batch, caller } = yield* overseen(params.batch_id)
          if (batch.status !== "validating" && batch.status !== "in_progress" && batch.status !== "cancelling" && batch.status !== "cancelled") {
            return yield* new BadRequest({ message: `Cannot cancel a batch with status ${batch.status}`, metadata: { status: batch.status } })
          }
          const cancel = store.cancel(batch.id, yield* Clock.currentTimeMillis)
          // A management key stopping someone's batch is an operator's action: an audit entry.
          if (caller.kind === "management" && batch.status !== "cancelling" && batch.status !== "cancelled") {
            yield* audit.recorded(cancel, () => ({
              action: "batch.cancel",
              target: { type: "batch", id: batch.id },
              workspaceId: batch.workspace_id,
              before: { status: batch.status, completed: Number(batch.completed), failed: Number(batch.failed), total: Number(batch.total) },
              after: { status: "cancelling" }
            }))
          } else {
            yield* cancel
          }
          return yield* object(yield* owned(batch.workspace_id, batch.id))
        })))
  })
)
