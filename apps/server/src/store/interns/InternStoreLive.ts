import { NameTaken } from "@switchyard/core/errors/InternError"
import { InternStore, type StoredIntern } from "@switchyard/core/interns/InternStore"
import { fromSqlError } from "@switchyard/core/store/StoreUnavailable"
import type { InternStatus } from "@switchyard/core/schema/Intern"
import { Effect, Layer, Option } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { type Instant, iso } from "../sql/Columns.ts"

interface InternRow {
  readonly id: string
  readonly workspace_id: string
  readonly creator_user_id: string
  readonly name: string
  readonly description: string | null
  readonly instructions: string | null
  readonly model: string | null
  readonly status: InternStatus
  readonly hostname: string | null
  readonly progress_label: string | null
  readonly progress_step: number | null
  readonly progress_total: number | null
  readonly last_failure_message: string | null
  readonly vault_id: string | null
  readonly attached_vault_id: string | null
  readonly run_id: string | null
  readonly created_at: Instant
  readonly updated_at: Instant
}

const fromRow = (row: InternRow): StoredIntern => ({
  id: row.id,
  workspaceId: row.workspace_id,
  creatorUserId: row.creator_user_id,
  name: row.name,
  description: row.description,
  instructions: row.instructions,
  model: row.model,
  status: row.status,
  hostname: row.hostname,
  progress: row.progress_label === null || row.progress_step === null || row.progress_total === null
    ? null
    : { step_label: row.progress_label, step_number: row.progress_step, total_steps: row.progress_total },
  lastFailureMessage: row.last_failure_message,
  vaultId: row.vault_id,
  attachedVaultId: row.attached_vault_id,
  runId: row.run_id,
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at)
})

const nameTaken = (name: string) =>
  new NameTaken({ message: `You already have an intern named '${name}' in this workspace; choose another name` })

const isNameClash = (error: SqlError.SqlError) =>
  error.reason._tag === "UniqueViolation" && error.reason.constraint.includes("name")

const first = (rows: ReadonlyArray<InternRow>) => Option.map(Option.fromNullishOr(rows[0]), fromRow)

export const layer = Layer.effect(
  InternStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, workspace_id, creator_user_id, name, description, instructions, model, status, hostname,
      progress_label, progress_step, progress_total, last_failure_message, vault_id, attached_vault_id, run_id,
      created_at, updated_at`

    const orNameTaken = (name: string, operation: string) => <A>(effect: Effect.Effect<A, SqlError.SqlError>) =>
      effect.pipe(
        Effect.catchIf(isNameClash, () => Effect.fail(nameTaken(name))),
        fromSqlError(operation)
      )

    return InternStore.of({
      insert: (intern) =>
        sql<InternRow>`INSERT INTO interns (id, workspace_id, creator_user_id, name, description, instructions, model,
            status, attached_vault_id, created_at, updated_at)
          VALUES (${intern.id}, ${intern.workspaceId}, ${intern.creatorUserId}, ${intern.name}, ${intern.description},
            ${intern.instructions}, ${intern.model}, 'stopped', ${intern.attachedVaultId}, ${intern.now}, ${intern.now})
          RETURNING ${columns}`.pipe(
          Effect.map((rows) => fromRow(rows[0]!)),
          orNameTaken(intern.name, "interns.insert")
        ),
      find: (id) => sql<InternRow>`SELECT ${columns} FROM interns WHERE id = ${id}`.pipe(Effect.map(first), fromSqlError("interns.find")),
      findInWorkspace: (workspaceId, id) =>
        sql<InternRow>`SELECT ${columns} FROM interns WHERE id = ${id} AND workspace_id = ${workspaceId}`.pipe(
          Effect.map(first),
          fromSqlError("interns.find")
        ),
      findByVault: (workspaceId, vaultId) =>
        sql<InternRow>`SELECT ${columns} FROM interns WHERE vault_id = ${vaultId} AND workspace_id = ${workspaceId}`.pipe(
          Effect.map(first),
          fromSqlError("interns.find_by_vault")
        ),
      list: (request) =>
        sql<InternRow>`SELECT ${columns} FROM interns
          WHERE workspace_id = ${request.workspaceId}
          ${request.statuses.length > 0 ? sql`AND ${sql.in("status", request.statuses)}` : sql``}
          ${request.after !== undefined ? sql`AND id > ${request.after}` : sql``}
          ORDER BY id LIMIT ${request.limit}`.pipe(
          Effect.map((rows) => rows.map(fromRow)),
          fromSqlError("interns.list")
        ),
      all: sql<InternRow>`SELECT ${columns} FROM interns ORDER BY id`.pipe(
        Effect.map((rows) => rows.map(fromRow)),
        fromSqlError("interns.all")
      ),
      updateSettings: (id, patch, now) => {
        const set: Record<string, unknown> = { updated_at: now }
        if (patch.name !== undefined) set.name = patch.name
        if (patch.description !== undefined) set.description = patch.description
        if (patch.instructions !== undefined) set.instructions = patch.instructions
        if (patch.model !== undefined) set.model = patch.model
        return sql<InternRow>`UPDATE interns SET ${sql.update(set)} WHERE id = ${id} RETURNING ${columns}`.pipe(
          Effect.map(first),
          orNameTaken(patch.name ?? "", "interns.update")
        )
      },
      transition: (id, expected, change, now) => {
        const set: Record<string, unknown> = {
          status: change.status,
          progress_label: change.progress?.step_label ?? null,
          progress_step: change.progress?.step_number ?? null,
          progress_total: change.progress?.total_steps ?? null,
          last_failure_message: change.lastFailureMessage,
          updated_at: now
        }
        if (change.runId !== undefined) set.run_id = change.runId
        if (change.hostname !== undefined) set.hostname = change.hostname
        if (change.vaultId !== undefined) set.vault_id = change.vaultId
        return sql<InternRow>`UPDATE interns SET ${sql.update(set)}
          WHERE id = ${id} AND status = ${expected.status}
            AND ${expected.runId === null ? sql`run_id IS NULL` : sql`run_id = ${expected.runId}`}
          RETURNING ${columns}`.pipe(Effect.map(first), fromSqlError("interns.transition"))
      },
      remove: (id, expectedStatus) =>
        sql<{ id: string }>`DELETE FROM interns WHERE id = ${id} AND status = ${expectedStatus} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          fromSqlError("interns.remove")
        )
    })
  })
)
