import * as Batch from "@switchyard/core/schema/Batch"
import { fromSqlError, type StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Context, Effect, Layer, Option } from "effect"
import { isReadonlyArrayNonEmpty } from "effect/Array"
import { SqlClient } from "effect/sql"
import * as BatchWrites from "./BatchWrites.ts"

/**
 * Provider batches in the SQL store (`provider_batches`, migrations `0019_provider_batches` and
 * `0024_provider_batch_jobs`), in the SQL PostgreSQL and SQLite share. A provider batch holds
 * some lines of one unit of a batch, all routed to one endpoint whose provider has a batch API
 * (one job there): written with the unit's checkpoint (`insert`, in its transaction), then
 * submitted, polled, finished and its files at the provider deleted by whichever replica claims
 * it, one step at a time. Times are epoch milliseconds from the caller's `Clock`.
 */

/** Where a provider batch stands: to submit, submitted, cancel sent, or its lines written. */
export type Status = "submitting" | "running" | "cancelling" | "done"

export interface ProviderBatchRow {
  readonly batch_id: string
  /** The number of its output and error chunks: after every unit's (see {@link chunkSeq}). */
  readonly seq: number
  readonly unit_seq: number
  readonly input_seq: number
  readonly line_offset: number
  readonly first_line: number
  /** Its line numbers, as a JSON array. */
  readonly lines: string
  readonly api: string
  readonly provider: string
  readonly endpoint: string
  /** The JSONL uploaded to the provider; dropped once the provider batch exists. */
  readonly requests: string | null
  readonly status: Status
  readonly upstream_file_id: string | null
  readonly upstream_batch_id: string | null
  readonly upstream_status: string | null
  readonly failures: number
  readonly next_poll_at: number | string
  readonly cancel_sent_at: number | string | null
  readonly created_at: number | string
  /** What the job is made with besides its input (JSON of `BatchProvider.Job`); NULL on rows older than it. */
  readonly job: string | null
  /** When the files it uploaded (and the provider wrote) were deleted; NULL while some may remain. */
  readonly cleaned_at: number | string | null
}

/** A provider batch to write with its unit's checkpoint. */
export interface NewProviderBatch {
  readonly lines: ReadonlyArray<number>
  readonly api: string
  readonly provider: string
  readonly endpoint: string
  readonly requests: string
  /** JSON of the job's model and parameters (`BatchProvider.Job`). */
  readonly job: string
}

/** What a finished provider batch writes: its output and error lines, and how many of each. */
export interface Finished {
  readonly output: string
  readonly errors: string
  readonly completed: number
  readonly failed: number
  /** What its served lines were charged: added to the batch's cost so far. */
  readonly costNanos: bigint
  /** How its job ended (a `BatchProvider.State`), or `live` when its lines ran as live calls. */
  readonly upstreamStatus: string
  /** From when its files at the provider may be deleted. */
  readonly now: number
}

/** A batch's provider job as the batch object lists it. */
export interface JobRow {
  readonly batch_id: string
  readonly provider: string
  readonly upstream_batch_id: string | null
  readonly status: Status
  readonly upstream_status: string | null
  readonly lines: string
}

/**
 * The chunk number of a batch's `n`th provider batch: after every unit's, since a batch has at most
 * `Batch.limits.lines` lines, hence units.
 */
const chunkSeq = (n: number) => Batch.limits.lines + n

type Op<A> = Effect.Effect<A, StoreUnavailable>

const columns = (sql: SqlClient.SqlClient) =>
  sql`batch_id, seq, unit_seq, input_seq, line_offset, first_line, lines, api, provider, endpoint, requests, status,
    upstream_file_id, upstream_batch_id, upstream_status, failures, next_poll_at, cancel_sent_at, created_at, job, cleaned_at`

/**
 * Writes a unit's provider batches, numbered after the batch's earlier ones: inside the unit's
 * checkpoint transaction, so that they exist exactly when the unit is done.
 */
export const insert = (
  sql: SqlClient.SqlClient,
  unit: { readonly batch_id: string; readonly seq: number; readonly input_seq: number; readonly line_offset: number; readonly first_line: number },
  parts: ReadonlyArray<NewProviderBatch>,
  now: number
) =>
  Effect.gen(function*() {
    if (parts.length === 0) return
    const counted = yield* sql<{ readonly provider_batches: number | string }>`UPDATE batches
      SET provider_batches = provider_batches + ${parts.length} WHERE id = ${unit.batch_id} RETURNING provider_batches`
    const first = Number(counted[0]?.provider_batches ?? parts.length) - parts.length
    const rows: Array<Record<string, unknown>> = parts.map((part, i) => ({
      batch_id: unit.batch_id,
      seq: chunkSeq(first + i),
      unit_seq: unit.seq,
      input_seq: unit.input_seq,
      line_offset: unit.line_offset,
      first_line: unit.first_line,
      lines: JSON.stringify(part.lines),
      api: part.api,
      provider: part.provider,
      endpoint: part.endpoint,
      requests: part.requests,
      job: part.job,
      status: "submitting",
      next_poll_at: now,
      created_at: now
    }))
    if (isReadonlyArrayNonEmpty(rows)) yield* sql`INSERT INTO provider_batches ${sql.insert(rows)}`
  })

export class ProviderBatchStore extends Context.Service<ProviderBatchStore, {
  /**
   * Claims a provider batch not done whose next look is due (or whose batch is being cancelled or
   * expired and was not told so yet), or one whose files at the provider are to be deleted (done,
   * or made before `cleanupBefore`: the retention sweep), for one step of `leaseMs` at most.
   */
  readonly claim: (owner: string, now: number, leaseMs: number, cleanupBefore: number) => Op<Option.Option<ProviderBatchRow>>
  /** Records what a step learnt and gives the claim back; false when the claim was lost. */
  readonly update: (
    row: ProviderBatchRow,
    owner: string,
    changes: {
      readonly status: Status
      readonly nextPollAt: number
      readonly upstreamFileId?: string | null | undefined
      readonly upstreamBatchId?: string | null | undefined
      readonly upstreamStatus?: string | null | undefined
      readonly cancelSentAt?: number | undefined
      readonly failures?: number | undefined
      /** Keeps the claim (a step in several parts), else gives it back. */
      readonly keepClaim?: boolean | undefined
    }
  ) => Op<boolean>
  /** Writes its lines as its chunks and its counts into the batch's, once, while the claim holds. */
  readonly finish: (row: ProviderBatchRow, owner: string, result: Finished) => Op<boolean>
  /** Records that its files at the provider are deleted (or given up on), and gives the claim back. */
  readonly cleaned: (row: ProviderBatchRow, owner: string, now: number) => Op<boolean>
  /** The provider jobs of some batches, oldest first within each. */
  readonly jobsOf: (batchIds: ReadonlyArray<string>) => Op<ReadonlyArray<JobRow>>
  /** Gives every claim back: the embedded store's start, as for units. */
  readonly releaseAll: Op<number>
  /** The ledger's costs of the generation ids already settled among `ids`. */
  readonly settled: (ids: ReadonlyArray<string>) => Op<ReadonlyMap<string, bigint>>
}>()("@switchyard/server/batches/ProviderBatchStore") {
  static readonly layer = Layer.effect(
    ProviderBatchStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const op = (operation: string) => <A, E, R>(self: Effect.Effect<A, E, R>) => fromSqlError(operation)(self)

      return ProviderBatchStore.of({
        claim: (owner, now, leaseMs, cleanupBefore) =>
          Effect.gen(function*() {
            const candidates = yield* sql<{ readonly batch_id: string; readonly seq: number }>`SELECT p.batch_id, p.seq
              FROM provider_batches p LEFT JOIN batches b ON b.id = p.batch_id
              WHERE (p.claimed_until IS NULL OR p.claimed_until < ${now})
                AND ((p.status <> 'done' AND (p.next_poll_at <= ${now} OR (p.cancel_sent_at IS NULL AND p.status <> 'cancelling'
                    AND (b.status IN ('cancelling', 'cancelled') OR b.expired_at IS NOT NULL))))
                  OR (p.upstream_file_id IS NOT NULL AND p.cleaned_at IS NULL
                    AND ((p.status = 'done' AND p.next_poll_at <= ${now}) OR p.created_at < ${cleanupBefore})))
              ORDER BY p.next_poll_at, p.batch_id, p.seq LIMIT 8`
            for (const candidate of candidates) {
              const claimed = yield* sql<ProviderBatchRow>`UPDATE provider_batches SET claimed_by = ${owner},
                  claimed_until = ${now + leaseMs}
                WHERE batch_id = ${candidate.batch_id} AND seq = ${candidate.seq}
                  AND (status <> 'done' OR (upstream_file_id IS NOT NULL AND cleaned_at IS NULL))
                  AND (claimed_until IS NULL OR claimed_until < ${now})
                RETURNING ${columns(sql)}`
              if (claimed[0] !== undefined) return Option.some(claimed[0])
            }
            return Option.none()
          }).pipe(op("providerBatches.claim")),
        update: (row, owner, changes) =>
          sql<{ readonly seq: number }>`UPDATE provider_batches SET status = ${changes.status},
              next_poll_at = ${changes.nextPollAt},
              ${changes.upstreamFileId === undefined ? sql`` : sql`upstream_file_id = ${changes.upstreamFileId},`}
              ${changes.upstreamBatchId === undefined ? sql`` : sql`upstream_batch_id = ${changes.upstreamBatchId}, requests = NULL,`}
              ${changes.upstreamStatus === undefined ? sql`` : sql`upstream_status = ${changes.upstreamStatus},`}
              ${changes.cancelSentAt === undefined ? sql`` : sql`cancel_sent_at = ${changes.cancelSentAt},`}
              ${changes.failures === undefined ? sql`` : sql`failures = ${changes.failures},`}
              ${changes.keepClaim === true ? sql`claimed_by = claimed_by` : sql`claimed_by = NULL, claimed_until = NULL`}
            WHERE batch_id = ${row.batch_id} AND seq = ${row.seq} AND claimed_by = ${owner}
              AND (status <> 'done' OR ${changes.status} = 'done')
            RETURNING seq`.pipe(Effect.map((rows) => rows.length > 0), op("providerBatches.update")),
        finish: (row, owner, result) =>
          sql.withTransaction(Effect.gen(function*() {
            const done = yield* sql<{ readonly seq: number }>`UPDATE provider_batches SET status = 'done', requests = NULL,
                upstream_status = ${result.upstreamStatus}, next_poll_at = ${result.now}, failures = 0, cleaned_at = NULL,
                claimed_by = NULL, claimed_until = NULL
              WHERE batch_id = ${row.batch_id} AND seq = ${row.seq} AND claimed_by = ${owner} AND status <> 'done'
              RETURNING seq`
            if (done.length === 0) return false
            const batch = yield* BatchWrites.filesOf(sql, row.batch_id)
            if (batch === undefined) return true
            if (result.completed > 0) {
              yield* BatchWrites.insertChunk(sql, batch.output_file_id, { seq: row.seq, lines: result.completed, data: result.output })
            }
            if (result.failed > 0) {
              yield* BatchWrites.insertChunk(sql, batch.error_file_id, { seq: row.seq, lines: result.failed, data: result.errors })
            }
            yield* BatchWrites.addCounts(sql, row.batch_id, result)
            return true
          })).pipe(op("providerBatches.finish")),
        cleaned: (row, owner, now) =>
          sql<{ readonly seq: number }>`UPDATE provider_batches SET cleaned_at = ${now}, claimed_by = NULL, claimed_until = NULL
            WHERE batch_id = ${row.batch_id} AND seq = ${row.seq} AND claimed_by = ${owner}
            RETURNING seq`.pipe(Effect.map((rows) => rows.length > 0), op("providerBatches.cleaned")),
        jobsOf: (batchIds) =>
          Effect.gen(function*() {
            const out: Array<JobRow> = []
            for (let i = 0; i < batchIds.length; i += 200) {
              const slice = batchIds.slice(i, i + 200)
              if (!isReadonlyArrayNonEmpty(slice)) continue
              out.push(...yield* sql<JobRow>`SELECT batch_id, provider, upstream_batch_id, status, upstream_status, lines
                FROM provider_batches WHERE batch_id IN ${sql.in(slice)} ORDER BY batch_id, seq`)
            }
            return out
          }).pipe(op("providerBatches.jobs")),
        releaseAll: sql<{ readonly seq: number }>`UPDATE provider_batches SET claimed_by = NULL, claimed_until = NULL
            WHERE claimed_by IS NOT NULL RETURNING seq`.pipe(Effect.map((rows) => rows.length), op("providerBatches.release")),
        settled: (ids) =>
          Effect.gen(function*() {
            const out = new Map<string, bigint>()
            for (let i = 0; i < ids.length; i += 200) {
              const slice = ids.slice(i, i + 200)
              if (!isReadonlyArrayNonEmpty(slice)) continue
              const rows = yield* sql<{ readonly generation_id: string; readonly cost_nanos: string }>`SELECT generation_id,
                CAST(cost_nanos AS text) AS cost_nanos FROM ledger WHERE generation_id IN ${sql.in(slice)}`
              for (const r of rows) out.set(r.generation_id, BigInt(r.cost_nanos))
            }
            return out as ReadonlyMap<string, bigint>
          }).pipe(op("providerBatches.settled"))
      })
    })
  )
}
