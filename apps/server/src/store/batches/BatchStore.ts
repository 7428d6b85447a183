import type * as Batch from "@switchyard/core/schema/Batch"
import { fromSqlError, type StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Context, Duration, Effect, Layer, Option, Stream } from "effect"
import { isReadonlyArrayNonEmpty } from "effect/Array"
import { SqlClient } from "effect/sql"
import * as BatchWrites from "./BatchWrites.ts"
import * as FileChunks from "./FileChunks.ts"
import type { ChunkRow } from "./FileChunks.ts"
import * as ProviderBatchStore from "./ProviderBatchStore.ts"

/**
 * Files, batches and batch units in the SQL store, in the SQL PostgreSQL and SQLite share.
 * Times are epoch milliseconds from the caller's `Clock`.
 */

export interface FileRow {
  readonly id: string
  readonly workspace_id: string
  readonly purpose: string
  readonly filename: string
  readonly bytes: number | string
  readonly lines: number
  readonly status: string
  readonly created_at: number | string
}

export interface BatchRow {
  readonly id: string
  readonly workspace_id: string
  readonly key_id: string
  readonly key_hash: string
  readonly user_id: string
  readonly endpoint: Batch.Endpoint
  readonly input_file_id: string
  readonly completion_window: string
  /** `live` when the creator asked for live execution only, else `auto` (provider batches where cheaper). */
  readonly execution: string
  readonly metadata: string | null
  readonly status: Batch.Status
  readonly output_file_id: string
  readonly error_file_id: string
  readonly errors: string | null
  readonly total: number
  readonly completed: number
  readonly failed: number
  /** What the served lines cost so far (0 until the first unit is written). */
  readonly cost_nanos: number | string | bigint
  readonly created_at: number | string
  readonly expires_at: number | string
  readonly in_progress_at: number | string | null
  readonly finalizing_at: number | string | null
  readonly completed_at: number | string | null
  readonly failed_at: number | string | null
  readonly expired_at: number | string | null
  readonly cancelling_at: number | string | null
  readonly cancelled_at: number | string | null
}

export interface UnitRow {
  readonly batch_id: string
  readonly seq: number
  readonly input_seq: number
  readonly line_offset: number
  readonly first_line: number
  readonly line_count: number
}

/**
 * A process that claims: its id (`GatewayProcess`), the time by its clock (the store's on
 * PostgreSQL is used instead), and how long unseen before a process counts as dead.
 */
export interface Claimer {
  readonly owner: string
  readonly now: number
  readonly staleAfter: Duration.Duration
}

export interface NewUnit {
  readonly seq: number
  readonly inputSeq: number
  readonly lineOffset: number
  readonly firstLine: number
  readonly lineCount: number
}


export interface Page<A> {
  readonly rows: ReadonlyArray<A>
  readonly hasMore: boolean
}

type Op<A> = Effect.Effect<A, StoreUnavailable>

/** What a finished unit writes: its output and error lines, and how many of each. */
export interface UnitResult {
  /** The served lines' output lines, each without its line end (each read once, as it is written). */
  readonly output: ReadonlyArray<{ readonly line: string }>
  /** The failed lines' error lines, each without its line end. */
  readonly errors: ReadonlyArray<{ readonly line: string }>
  readonly completed: number
  readonly failed: number
  /** What the served lines cost. */
  readonly costNanos: bigint
  /** The unit's lines that go to provider batches, written with it (ProviderBatches.ts). */
  readonly providerBatches?: ReadonlyArray<ProviderBatchStore.NewProviderBatch> | undefined
  /** When the unit was written (the provider batches' creation). */
  readonly now?: number | undefined
}

export class BatchStore extends Context.Service<BatchStore, {
  readonly insertChunk: (fileId: string, chunk: ChunkRow) => Op<void>
  readonly insertFile: (row: FileRow) => Op<void>
  readonly dropFile: (fileId: string) => Op<void>
  readonly file: (workspaceId: string, id: string) => Op<Option.Option<FileRow>>
  readonly files: (workspaceId: string, options: { readonly after?: string | undefined; readonly limit: number; readonly purpose?: string | undefined }) => Op<Page<FileRow>>
  /** The file's chunks in order, read a few at a time. */
  readonly chunks: (fileId: string) => Stream.Stream<ChunkRow, StoreUnavailable>
  readonly chunk: (fileId: string, seq: number) => Op<Option.Option<ChunkRow>>
  readonly insertBatch: (row: BatchRow) => Op<void>
  readonly batch: (workspaceId: string, id: string) => Op<Option.Option<BatchRow>>
  readonly batchById: (id: string) => Op<Option.Option<BatchRow>>
  /** The batches of one workspace, or (`undefined`) of every workspace, newest first. */
  readonly batches: (workspaceId: string | undefined, options: { readonly after?: string | undefined; readonly limit: number }) => Op<Page<BatchRow>>
  /** Asks a batch to stop: `cancelling` (a batch not yet running becomes `cancelled` once its units are dropped). */
  readonly cancel: (id: string, now: number) => Op<void>
  readonly validating: Op<ReadonlyArray<string>>
  /** The batch's units and its total, and `in_progress`; nothing when another replica did it first. */
  readonly start: (id: string, units: ReadonlyArray<NewUnit>, total: number, now: number) => Op<void>
  readonly fail: (id: string, errors: ReadonlyArray<Batch.BatchError>, now: number) => Op<void>
  /**
   * Claims the batch's validation for the claimer, if no live process has it: one process reads a
   * new batch's input, whatever the number of replicas and workers.
   */
  readonly claimValidation: (id: string, claimer: Claimer) => Op<boolean>
  /** Lets go of a validation the owner did not finish (a store error): another try claims it again. */
  readonly releaseValidation: (id: string, owner: string) => Op<void>
  /**
   * Claims a unit of a batch in progress that is waiting, or claimed by a process judged dead
   * (not seen by the store within `staleAfter`, the liveness of `GatewayProcesses`).
   */
  readonly claim: (claimer: Claimer) => Op<Option.Option<UnitRow>>
  /** Whether the unit is still claimed by the owner (a process judged dead while frozen lost it). */
  readonly claimed: (unit: UnitRow, owner: string) => Op<boolean>
  /** Gives a claimed unit back (a process that stops), for any replica to claim at once. */
  readonly release: (unit: UnitRow, owner: string) => Op<void>
  /**
   * Writes a unit's lines and counts once, if its claim is still the owner's (`written`), and
   * claims the owner's next unit (as `claim` does) in the same transaction: one commit, one flush
   * to disk, where there were two.
   */
  readonly completeAndClaim: (
    unit: UnitRow,
    owner: string,
    result: UnitResult,
    next: Claimer
  ) => Op<{ readonly written: boolean; readonly next: Option.Option<UnitRow> }>
  /**
   * Batches whose completion window passed by `now`: one still validating is `expired`; one in
   * progress is marked (`expired_at`) so that its units not yet run write `batch_expired` error
   * lines instead of running, and it finishes as `expired`.
   */
  readonly expireOverdue: (now: number) => Op<void>
  /**
   * Batches whose every unit and provider batch is done (or dropped), finished: `completed` or
   * `cancelled` (a cancelled batch once no live process still runs one of its units); the ones
   * this call ended, as they ended.
   */
  readonly finalize: (claimer: Claimer) => Op<ReadonlyArray<{ readonly batch: BatchRow; readonly status: Batch.Status; readonly errorFile: string }>>
  readonly status: (id: string) => Op<Option.Option<Batch.Status>>
  /**
   * Files made before `cutoff` expire: their bytes go, their row stays (`status` `expired`) so
   * that asking for one says so. An input file of a batch still running stays.
   */
  readonly expire: (cutoff: number) => Op<number>
}>()("@switchyard/server/batches/BatchStore") {
  static readonly layer = Layer.effect(
    BatchStore,
    Effect.map(SqlClient.SqlClient, (sql) =>
      BatchStore.of({ ...fileStatements(sql), ...batchStatements(sql), ...unitClaims(sql), ...finalizeStatement(sql) }))
  )
}

type Sql = SqlClient.SqlClient
type Service = BatchStore["Service"]

const op = (operation: string) => <A, E, R>(self: Effect.Effect<A, E, R>) => fromSqlError(operation)(self)

const pageOf = <A>(rows: ReadonlyArray<A>, limit: number): Page<A> => ({
  rows: rows.slice(0, limit),
  hasMore: rows.length > limit
})

const batchColumns = (sql: Sql) =>
  sql`id, workspace_id, key_id, key_hash, user_id, endpoint, input_file_id, completion_window,
  execution, metadata, status, output_file_id, error_file_id, errors, total, completed, failed, cost_nanos, created_at,
  expires_at,
  in_progress_at, finalizing_at, completed_at, failed_at, expired_at, cancelling_at, cancelled_at`

// Whether the process named in `column` is alive: seen by the store within `staleAfter`. On
// PostgreSQL by the database's clock (replicas' clocks differ); on SQLite by the one machine's.
const alive = (sql: Sql, column: string, claimer: Claimer) =>
  sql.onDialectOrElse({
    pg: () =>
      sql`EXISTS (SELECT 1 FROM gateway_processes p WHERE p.id = ${sql.literal(column)}
        AND p.seen_at >= now() - make_interval(secs => ${Duration.toMillis(claimer.staleAfter) / 1000}::double precision))`,
    orElse: () =>
      sql`EXISTS (SELECT 1 FROM gateway_processes p WHERE p.id = ${sql.literal(column)}
        AND p.seen_at >= ${claimer.now - Duration.toMillis(claimer.staleAfter)})`
  })

/** Files: their rows and chunks, listed, read and expired. */
const fileStatements = (sql: Sql) => ({
  insertChunk: (fileId, chunk) => BatchWrites.insertChunk(sql, fileId, chunk).pipe(op("files.chunk")),
  insertFile: (row) =>
    sql`INSERT INTO batch_files (id, workspace_id, purpose, filename, bytes, lines, status, created_at)
      VALUES (${row.id}, ${row.workspace_id}, ${row.purpose}, ${row.filename}, ${Number(row.bytes)}, ${row.lines},
        ${row.status}, ${Number(row.created_at)})`.pipe(Effect.asVoid, op("files.insert")),
  dropFile: (fileId) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`DELETE FROM batch_file_chunks WHERE file_id = ${fileId}`
      yield* sql`DELETE FROM batch_files WHERE id = ${fileId}`
    })).pipe(op("files.delete")),
  file: (workspaceId, id) =>
    sql<FileRow>`SELECT * FROM batch_files WHERE id = ${id} AND workspace_id = ${workspaceId}`.pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0])),
      op("files.get")
    ),
  files: (workspaceId, { after, limit, purpose }) =>
    Effect.gen(function*() {
      const cursor = after === undefined
        ? undefined
        : (yield* sql<FileRow>`SELECT * FROM batch_files WHERE id = ${after} AND workspace_id = ${workspaceId}`)[0]
      const rows = yield* sql<FileRow>`SELECT * FROM batch_files WHERE workspace_id = ${workspaceId} AND status = 'processed'
        ${purpose === undefined ? sql`` : sql`AND purpose = ${purpose}`}
        ${
        cursor === undefined
          ? sql``
          : sql`AND (created_at < ${Number(cursor.created_at)} OR (created_at = ${Number(cursor.created_at)} AND id < ${cursor.id}))`
      }
        ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
      return pageOf(rows, limit)
    }).pipe(op("files.list")),
  chunks: (fileId) =>
    Stream.paginate(0, (from: number) =>
      sql<ChunkRow>`SELECT seq, lines, data FROM batch_file_chunks WHERE file_id = ${fileId} AND seq >= ${from}
        ORDER BY seq LIMIT 4`.pipe(
        Effect.map((rows) => [rows, rows.length < 4 ? Option.none() : Option.some(rows.at(-1)!.seq + 1)] as const),
        op("files.content")
      )
    ),
  chunk: (fileId, seq) =>
    sql<ChunkRow>`SELECT seq, lines, data FROM batch_file_chunks WHERE file_id = ${fileId} AND seq = ${seq}`.pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0])),
      op("files.chunk")
    ),
  expire: (cutoff) =>
    sql.withTransaction(Effect.gen(function*() {
      const expired = yield* sql<{ readonly id: string }>`UPDATE batch_files SET status = 'expired'
        WHERE status = 'processed' AND created_at < ${cutoff}
          AND id NOT IN (SELECT input_file_id FROM batches WHERE status IN ('validating', 'in_progress', 'cancelling'))
        RETURNING id`
      for (const { id } of expired) yield* sql`DELETE FROM batch_file_chunks WHERE file_id = ${id}`
      return expired.length
    })).pipe(op("files.expire"))
}) satisfies Partial<Service>

/** Batches: their rows, listed, started, failed, cancelled and expired. */
const batchStatements = (sql: Sql) => ({
  insertBatch: (row) =>
    sql`INSERT INTO batches (id, workspace_id, key_id, key_hash, user_id, endpoint, input_file_id,
        completion_window, execution, metadata, status, output_file_id, error_file_id, created_at, expires_at)
      VALUES (${row.id}, ${row.workspace_id}, ${row.key_id}, ${row.key_hash}, ${row.user_id}, ${row.endpoint},
        ${row.input_file_id}, ${row.completion_window}, ${row.execution}, ${row.metadata}, ${row.status}, ${row.output_file_id},
        ${row.error_file_id}, ${Number(row.created_at)}, ${Number(row.expires_at)})`.pipe(Effect.asVoid, op("batches.insert")),
  batch: (workspaceId, id) =>
    sql<BatchRow>`SELECT ${batchColumns(sql)} FROM batches WHERE id = ${id} AND workspace_id = ${workspaceId}`.pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0])),
      op("batches.get")
    ),
  batchById: (id) =>
    sql<BatchRow>`SELECT ${batchColumns(sql)} FROM batches WHERE id = ${id}`.pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0])),
      op("batches.get")
    ),
  batches: (workspaceId, { after, limit }) =>
    Effect.gen(function*() {
      const inScope = workspaceId === undefined ? sql`1 = 1` : sql`workspace_id = ${workspaceId}`
      const cursor = after === undefined
        ? undefined
        : (yield* sql<BatchRow>`SELECT ${batchColumns(sql)} FROM batches WHERE id = ${after} AND ${inScope}`)[0]
      const rows = yield* sql<BatchRow>`SELECT ${batchColumns(sql)} FROM batches WHERE ${inScope}
        ${
        cursor === undefined
          ? sql``
          : sql`AND (created_at < ${Number(cursor.created_at)} OR (created_at = ${Number(cursor.created_at)} AND id < ${cursor.id}))`
      }
        ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
      return pageOf(rows, limit)
    }).pipe(op("batches.list")),
  cancel: (id, now) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`UPDATE batches SET status = 'cancelling', cancelling_at = ${now}
        WHERE id = ${id} AND status IN ('validating', 'in_progress')`
      // Units no replica runs yet are dropped; running ones stop at their next check.
      yield* sql`UPDATE batch_units SET status = 'dropped' WHERE batch_id = ${id} AND status = 'pending'`
    })).pipe(op("batches.cancel")),
  validating: sql<{ readonly id: string }>`SELECT id FROM batches WHERE status = 'validating' ORDER BY created_at LIMIT 8`.pipe(
    Effect.map((rows) => rows.map((r) => r.id)),
    op("batches.validating")
  ),
  start: (id, units, total, now) =>
    sql.withTransaction(Effect.gen(function*() {
      const started = yield* sql<{ readonly id: string }>`UPDATE batches SET status = 'in_progress', in_progress_at = ${now},
        total = ${total} WHERE id = ${id} AND status = 'validating' RETURNING id`
      if (started.length === 0) return
      for (let i = 0; i < units.length; i += 200) {
        const rows: Array<Record<string, unknown>> = units.slice(i, i + 200).map((u) => ({
          batch_id: id,
          seq: u.seq,
          input_seq: u.inputSeq,
          line_offset: u.lineOffset,
          first_line: u.firstLine,
          line_count: u.lineCount,
          status: "pending"
        }))
        if (isReadonlyArrayNonEmpty(rows)) yield* sql`INSERT INTO batch_units ${sql.insert(rows)}`
      }
    })).pipe(op("batches.start")),
  fail: (id, errors, now) =>
    sql`UPDATE batches SET status = 'failed', failed_at = ${now},
        errors = ${JSON.stringify({ object: "list", data: errors })}
      WHERE id = ${id} AND status = 'validating'`.pipe(Effect.asVoid, op("batches.fail")),
  expireOverdue: (now) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`UPDATE batches SET status = 'expired', expired_at = ${now}, output_file_id = '', error_file_id = ''
        WHERE status = 'validating' AND expires_at <= ${now}`
      yield* sql`UPDATE batches SET expired_at = ${now}
        WHERE status = 'in_progress' AND expires_at <= ${now} AND expired_at IS NULL`
    })).pipe(op("batches.expire")),
  status: (id) =>
    sql<{ readonly status: Batch.Status }>`SELECT status FROM batches WHERE id = ${id}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (r) => r.status)),
      op("batches.status")
    )
}) satisfies Partial<Service>

/** A batch's validation and units, claimed by a live process, given back, and written once. */
const unitClaims = (sql: Sql) => {
  // A unit another process may take: waiting, or claimed by a process judged dead. A unit
  // claimed by this process is never its own to take again (the embedded store's only process
  // has no heartbeat row).
  const claimable = (claimer: Claimer, units = "u") =>
    sql`(${sql.literal(units)}.status = 'pending' OR (${sql.literal(units)}.status = 'running'
      AND ${sql.literal(units)}.claimed_by <> ${claimer.owner} AND NOT ${alive(sql, `${units}.claimed_by`, claimer)}))`

  const unitColumns = sql`batch_id, seq, input_seq, line_offset, first_line, line_count`

  // Claims one unit. PostgreSQL: one statement, the candidate locked with `SKIP LOCKED`, so
  // replicas claiming at once take different units and none waits on another. SQLite: one
  // writer at a time; the update repeats the condition, so a unit claimed in between is skipped.
  const claimOne = (claimer: Claimer) =>
    sql.onDialectOrElse({
      pg: () =>
        Effect.map(
          // The candidate in a CTE: evaluated once (a subquery in `IN` may be run again per row
          // and claim several units, of which only one would be run).
          sql<UnitRow>`WITH next AS (SELECT u.batch_id, u.seq
              FROM batch_units u JOIN batches b ON b.id = u.batch_id
              WHERE b.status = 'in_progress' AND ${claimable(claimer)}
              ORDER BY b.created_at, u.batch_id, u.seq LIMIT 1
              FOR UPDATE OF u SKIP LOCKED)
            UPDATE batch_units SET status = 'running', claimed_by = ${claimer.owner}, claimed_until = NULL
            FROM next WHERE batch_units.batch_id = next.batch_id AND batch_units.seq = next.seq
            RETURNING ${sql.literal(["batch_id", "seq", "input_seq", "line_offset", "first_line", "line_count"].map((c) => `batch_units.${c}`).join(", "))}`,
          (rows) => Option.fromNullishOr(rows[0])
        ),
      orElse: () =>
        Effect.gen(function*() {
          const candidates = yield* sql<{ readonly batch_id: string; readonly seq: number }>`SELECT u.batch_id, u.seq
            FROM batch_units u JOIN batches b ON b.id = u.batch_id
            WHERE b.status = 'in_progress' AND ${claimable(claimer)}
            ORDER BY b.created_at, u.batch_id, u.seq LIMIT 8`
          for (const candidate of candidates) {
            const claimed = yield* sql<UnitRow>`UPDATE batch_units SET status = 'running', claimed_by = ${claimer.owner},
                claimed_until = NULL
              WHERE batch_id = ${candidate.batch_id} AND seq = ${candidate.seq} AND ${claimable(claimer, "batch_units")}
              RETURNING ${unitColumns}`
            if (claimed[0] !== undefined) return Option.some(claimed[0])
          }
          return Option.none()
        })
    })

  // Marks a unit done with its lines and counts, if its claim is still the owner's (in a transaction).
  const completeOne = (unit: UnitRow, owner: string, result: UnitResult) =>
    Effect.gen(function*() {
      const done = yield* sql<{ readonly seq: number }>`UPDATE batch_units SET status = 'done',
          completed = ${result.completed}, failed = ${result.failed}
        WHERE batch_id = ${unit.batch_id} AND seq = ${unit.seq} AND status = 'running' AND claimed_by = ${owner}
        RETURNING seq`
      if (done.length === 0) return false
      const batch = (yield* BatchWrites.filesOf(sql, unit.batch_id))!
      for (const chunk of FileChunks.unitChunks(unit.first_line, result.output)) yield* BatchWrites.insertChunk(sql, batch.output_file_id, chunk)
      for (const chunk of FileChunks.unitChunks(unit.first_line, result.errors)) yield* BatchWrites.insertChunk(sql, batch.error_file_id, chunk)
      yield* BatchWrites.addCounts(sql, unit.batch_id, result)
      yield* ProviderBatchStore.insert(sql, unit, result.providerBatches ?? [], result.now ?? 0)
      return true
    })

  return {
    claimValidation: (id, claimer) =>
      sql<{ readonly id: string }>`UPDATE batches SET validator = ${claimer.owner}
        WHERE id = ${id} AND status = 'validating'
          AND (validator IS NULL OR (validator <> ${claimer.owner} AND NOT ${alive(sql, "batches.validator", claimer)}))
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), op("batches.validate")),
    releaseValidation: (id, owner) =>
      sql`UPDATE batches SET validator = NULL WHERE id = ${id} AND validator = ${owner} AND status = 'validating'`.pipe(
        Effect.asVoid,
        op("batches.validate")
      ),
    claim: (claimer) => claimOne(claimer).pipe(op("batches.claim")),
    claimed: (unit, owner) =>
      sql<{ readonly seq: number }>`SELECT seq FROM batch_units
        WHERE batch_id = ${unit.batch_id} AND seq = ${unit.seq} AND status = 'running' AND claimed_by = ${owner}`.pipe(
        Effect.map((rows) => rows.length > 0),
        op("batches.claimed")
      ),
    release: (unit, owner) =>
      sql`UPDATE batch_units SET status = 'pending', claimed_by = NULL, claimed_until = NULL
        WHERE batch_id = ${unit.batch_id} AND seq = ${unit.seq} AND status = 'running' AND claimed_by = ${owner}`.pipe(
        Effect.asVoid,
        op("batches.release")
      ),
    completeAndClaim: (unit, owner, result, next) =>
      sql.withTransaction(Effect.gen(function*() {
        const written = yield* completeOne(unit, owner, result)
        return { written, next: yield* claimOne(next) }
      })).pipe(op("batches.complete"))
  } satisfies Partial<Service>
}

/** Batches whose every unit and provider batch is done, finished, with their output and error files. */
const finalizeStatement = (sql: Sql) => {
  const fileTotals = (fileId: string) =>
    sql<{ readonly lines: number | string | null; readonly chunks: number | string }>`SELECT SUM(lines) AS lines, COUNT(*) AS chunks
      FROM batch_file_chunks WHERE file_id = ${fileId}`

  // A finished batch's output and error files, from the chunks its units wrote.
  const outputFile = (workspaceId: string, fileId: string, filename: string, now: number) =>
    Effect.gen(function*() {
      const totals = (yield* fileTotals(fileId))[0]
      if (totals === undefined || Number(totals.chunks) === 0) return false
      // Bytes, not characters (LENGTH counts characters of text on both dialects). SQLite reads
      // OCTET_LENGTH from the record's header, not the value: a 1.5 GB output is not read again.
      const bytes = yield* sql<{ readonly bytes: number | string | null }>`SELECT SUM(OCTET_LENGTH(data)) AS bytes
        FROM batch_file_chunks WHERE file_id = ${fileId}`
      yield* sql`INSERT INTO batch_files (id, workspace_id, purpose, filename, bytes, lines, status, created_at)
        VALUES (${fileId}, ${workspaceId}, 'batch_output', ${filename}, ${Number(bytes[0]?.bytes ?? 0)},
          ${Number(totals.lines ?? 0)}, 'processed', ${now})
        ON CONFLICT (id) DO NOTHING`
      return true
    })

  return {
    finalize: (claimer) =>
      Effect.gen(function*() {
        const now = claimer.now
        const finished = yield* sql<BatchRow>`SELECT ${batchColumns(sql)} FROM batches b
          WHERE b.status IN ('in_progress', 'cancelling')
            AND NOT EXISTS (SELECT 1 FROM batch_units u WHERE u.batch_id = b.id AND (
              (b.status = 'in_progress' AND u.status IN ('pending', 'running'))
              OR (u.status = 'running' AND (u.claimed_by = ${claimer.owner} OR ${alive(sql, "u.claimed_by", claimer)}))))
            AND NOT EXISTS (SELECT 1 FROM provider_batches p WHERE p.batch_id = b.id AND p.status <> 'done')`
        const ended: Array<{ readonly batch: BatchRow; readonly status: Batch.Status; readonly errorFile: string }> = []
        for (const batch of finished) {
          yield* sql.withTransaction(Effect.gen(function*() {
            const cancelled = batch.status === "cancelling"
            const expired = !cancelled && batch.expired_at !== null
            const status = cancelled ? "cancelled" : expired ? "expired" : "completed"
            const output = yield* outputFile(batch.workspace_id, batch.output_file_id, `${batch.id}_output.jsonl`, now)
            const errors = yield* outputFile(batch.workspace_id, batch.error_file_id, `${batch.id}_error.jsonl`, now)
            const done = yield* sql<{ readonly id: string }>`UPDATE batches SET
                status = ${status},
                finalizing_at = ${now},
                ${cancelled ? sql`cancelled_at = ${now}` : expired ? sql`expired_at = ${now}` : sql`completed_at = ${now}`},
                output_file_id = ${output ? batch.output_file_id : ""},
                error_file_id = ${errors ? batch.error_file_id : ""}
              WHERE id = ${batch.id} AND status = ${batch.status}
              RETURNING id`
            // Another process may have ended it first: it says so, not this one.
            if (done.length > 0) ended.push({ batch, status, errorFile: errors ? batch.error_file_id : "" })
          }))
        }
        return ended
      }).pipe(op("batches.finalize"))
  } satisfies Partial<Service>
}
