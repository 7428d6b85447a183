/**
 * The intern record and the request and response bodies of the intern operations, as the wire
 * carries them.
 *
 * **Details**
 *
 * An intern is a named assistant runtime owned by a workspace: its settings (name, description,
 * instructions, model), its lifecycle `status`, the `hostname` it was given when first
 * provisioned, the active provisioning step and the vault ids.
 *
 * The record is sent with both spellings of four keys: the spec names `lastFailureMessage`,
 * `workspaceId`, `createdAt` and `updatedAt`, while the public SDK reads `last_failure_message`,
 * `workspace_id`, `created_at` and `updated_at`. Both are always present and always equal, so a
 * client written against either works. Every nullable key is present with `null`, never omitted.
 *
 * **Gotchas**
 *
 * Length limits count Unicode code points, as JSON Schema's `maxLength` does, not UTF-16 units:
 * a description of 2000 emoji is accepted. Every length limit of the API counts this way.
 *
 * @since 0.1.0
 */
import { Schema, SchemaGetter } from "effect"

/**
 * Every lifecycle status an intern can be in.
 *
 * @see {@link InternLifecycle} for which operation and runtime event leads from one to another.
 *
 * @since 0.1.0
 */
export const statuses = [
  "awaiting_slack_install",
  "queued",
  "provisioning",
  "running",
  "failed",
  "stopped",
  "destroying",
  "destroy_failed"
] as const

/**
 * An intern's lifecycle status.
 *
 * @since 0.1.0
 */
export const InternStatus = Schema.Literals(statuses)

/**
 * @since 0.1.0
 */
export type InternStatus = typeof InternStatus.Type

/**
 * The limits of the update operation (and of create, which shares them).
 *
 * @since 0.1.0
 */
export const limits = {
  nameMin: 2,
  nameMax: 17,
  description: 2000,
  instructions: 100_000,
  model: 200,
  body: 1_048_576
} as const

const atMostChars = (max: number, field: string) =>
  Schema.isMaxCodePoints(max, { message: `${field} must be at most ${max} characters`, expected: `at most ${max} characters` })

/**
 * The pattern every intern name matches: lowercase letters and digits in hyphen-separated groups,
 * starting with a letter.
 *
 * @since 0.1.0
 */
const namePattern = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/u

/**
 * An intern name: 2 to 17 characters matching {@link namePattern}.
 *
 * **Gotchas**
 *
 * The schema cannot see the other interns: uniqueness per creator within the workspace is checked
 * by the store and answered with `name_taken`.
 *
 * @since 0.1.0
 */
const InternName = Schema.String.check(
  Schema.isBetweenCodePoints(limits.nameMin, limits.nameMax, {
    message: `name must be ${limits.nameMin} to ${limits.nameMax} characters`
  }),
  Schema.isPattern(namePattern, {
    message: "name must be lowercase letters and digits in hyphen-separated groups, starting with a letter"
  })
)

/**
 * The pattern of a model slug: `<vendor>/<model>` with an optional `:<variant>`
 * (`openai/gpt-4o`, `meta-llama/llama-3.1-8b-instruct:free`).
 *
 * @since 0.1.0
 */
const modelPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*(:[A-Za-z0-9][A-Za-z0-9._-]*)?$/u

/**
 * A model slug of at most 200 characters.
 *
 * @since 0.1.0
 */
const ModelSlug = Schema.String.check(
  atMostChars(limits.model, "model"),
  Schema.isPattern(modelPattern, { message: "model must be a model slug of the form <vendor>/<model>[:<variant>]" })
)

/**
 * A description of at most 2000 characters.
 *
 * @since 0.1.0
 */
const Description = Schema.String.check(atMostChars(limits.description, "description"))

/**
 * Standing instructions of at most 100000 characters.
 *
 * @since 0.1.0
 */
const Instructions = Schema.String.check(atMostChars(limits.instructions, "instructions"))

/**
 * The active provisioning step, as the public SDK reads it.
 *
 * @since 0.1.0
 */
export const InternProgress = Schema.Struct({
  step_label: Schema.String,
  step_number: Schema.Int,
  total_steps: Schema.Int
})

/**
 * @since 0.1.0
 */
export type InternProgress = typeof InternProgress.Type

/**
 * One intern as every operation returns it.
 *
 * @since 0.1.0
 */
export const InternRecord = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  instructions: Schema.NullOr(Schema.String),
  model: Schema.NullOr(Schema.String),
  status: InternStatus,
  hostname: Schema.NullOr(Schema.String),
  progress: Schema.NullOr(InternProgress),
  lastFailureMessage: Schema.NullOr(Schema.String),
  last_failure_message: Schema.NullOr(Schema.String),
  vault_id: Schema.NullOr(Schema.String),
  attached_vault_id: Schema.NullOr(Schema.String),
  workspaceId: Schema.String,
  workspace_id: Schema.String,
  createdAt: Schema.String,
  created_at: Schema.String,
  updatedAt: Schema.String,
  updated_at: Schema.String
})

/**
 * @since 0.1.0
 */
export type InternRecord = typeof InternRecord.Type

/**
 * An intern's facts, one spelling each, as the store keeps them.
 *
 * @since 0.1.0
 */
export interface Intern {
  readonly id: string
  readonly workspaceId: string
  readonly creatorUserId: string
  readonly name: string
  readonly description: string | null
  readonly instructions: string | null
  readonly model: string | null
  readonly status: InternStatus
  readonly hostname: string | null
  readonly progress: InternProgress | null
  readonly lastFailureMessage: string | null
  readonly vaultId: string | null
  readonly attachedVaultId: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

/**
 * The wire record of an intern, with both spellings of the four keys that have two.
 *
 * @since 0.1.0
 */
export const toRecord = (intern: Intern): InternRecord => ({
  id: intern.id,
  name: intern.name,
  description: intern.description,
  instructions: intern.instructions,
  model: intern.model,
  status: intern.status,
  hostname: intern.hostname,
  progress: intern.progress,
  lastFailureMessage: intern.lastFailureMessage,
  last_failure_message: intern.lastFailureMessage,
  vault_id: intern.vaultId,
  attached_vault_id: intern.attachedVaultId,
  workspaceId: intern.workspaceId,
  workspace_id: intern.workspaceId,
  createdAt: intern.createdAt,
  created_at: intern.createdAt,
  updatedAt: intern.updatedAt,
  updated_at: intern.updatedAt
})

/**
 * The body of `PATCH /interns/{internId}`.
 *
 * **Details**
 *
 * An omitted key leaves its field unchanged; `null` clears `description` or `instructions` and
 * sets `model` back to the workspace default. `name` cannot be cleared. Keys other than these
 * four are refused, so a misspelt field is an error instead of a silent no-op.
 *
 * @since 0.1.0
 */
export const UpdateInternBody = Schema.Struct({
  name: Schema.optionalKey(InternName),
  description: Schema.optionalKey(Schema.NullOr(Description)),
  instructions: Schema.optionalKey(Schema.NullOr(Instructions)),
  model: Schema.optionalKey(Schema.NullOr(ModelSlug))
})

/**
 * @since 0.1.0
 */
export type UpdateInternBody = typeof UpdateInternBody.Type

/**
 * The body of `POST /interns`, as the public SDK sends it (`model` is accepted as well).
 *
 * **Details**
 *
 * `provision: true` provisions the intern right after creating it. `vault_id` borrows the vault of
 * another intern of the workspace (the new intern's `attached_vault_id`). `workspace_id`, when
 * sent, must be the workspace the key selects.
 *
 * @since 0.1.0
 */
export const CreateInternBody = Schema.Struct({
  name: InternName,
  description: Schema.optionalKey(Schema.NullOr(Description)),
  instructions: Schema.optionalKey(Schema.NullOr(Instructions)),
  model: Schema.optionalKey(Schema.NullOr(ModelSlug)),
  provision: Schema.optionalKey(Schema.Boolean),
  vault_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1)))
})

/**
 * @since 0.1.0
 */
export type CreateInternBody = typeof CreateInternBody.Type

/**
 * The body of `DELETE /interns/{internId}` (the body itself may be absent).
 *
 * **Details**
 *
 * Deleting an intern that has a disk erases it; the request must say so with
 * `acknowledge_workspace_loss: true`.
 *
 * @since 0.1.0
 */
export const DeleteInternBody = Schema.Struct({
  acknowledge_workspace_loss: Schema.optionalKey(Schema.Boolean)
})

/**
 * @since 0.1.0
 */
export type DeleteInternBody = typeof DeleteInternBody.Type

/**
 * The path parameter of every single-intern operation.
 *
 * @since 0.1.0
 */
export const InternIdParams = {
  internId: Schema.String.check(Schema.isMinLength(1))
}

const splitStatuses = Schema.Array(Schema.String).pipe(
  Schema.decodeTo(Schema.Array(InternStatus), {
    decode: SchemaGetter.transform((values: ReadonlyArray<string>) =>
      values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v.length > 0) as Array<InternStatus>
    ),
    encode: SchemaGetter.transform((values: ReadonlyArray<InternStatus>) => values.length === 0 ? [] : [values.join(",")])
  })
)

const PageLimitFromString = Schema.String.check(Schema.isPattern(/^[1-9][0-9]{0,2}$/u, {
  message: "limit must be an integer from 1 to 100"
})).pipe(
  Schema.decodeTo(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 }, {
    message: "limit must be an integer from 1 to 100"
  })), {
    decode: SchemaGetter.transform((s: string) => Number(s)),
    encode: SchemaGetter.transform((n: number) => String(n))
  })
)

/**
 * The query of `GET /interns`: `limit` (1 to 100, default {@link defaultPageSize}),
 * `starting_after` (the `next_cursor` of the previous page), `status` (one or more statuses,
 * comma-separated or repeated) and `workspace_id` (must be the key's workspace when sent).
 *
 * @since 0.1.0
 */
export const ListInternsQuery = {
  limit: Schema.optionalKey(PageLimitFromString),
  starting_after: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  status: Schema.optionalKey(splitStatuses),
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1)))
}

/**
 * How many interns a page holds when the query sets no `limit`.
 *
 * @since 0.1.0
 */
export const defaultPageSize = 20

/**
 * One page of the intern listing. `next_cursor` is present exactly when `has_more` is true.
 *
 * @since 0.1.0
 */
export const InternList = Schema.Struct({
  data: Schema.Array(InternRecord),
  has_more: Schema.Boolean,
  next_cursor: Schema.optionalKey(Schema.String)
})

/**
 * @since 0.1.0
 */
export type InternList = typeof InternList.Type

/**
 * The answer of the suspend operation: the runtime is stopped and its disk kept.
 *
 * @since 0.1.0
 */
export const Suspended = Schema.Struct({ suspended: Schema.Literal(true) })

/**
 * The answer of the provision operation: provisioning has started.
 *
 * @since 0.1.0
 */
export const Provisioning = Schema.Struct({ provisioning: Schema.Literal(true) })

/**
 * The answer of the delete operation: the runtime and its disk are being removed.
 *
 * @since 0.1.0
 */
export const Deleting = Schema.Struct({ deleting: Schema.Literal(true) })
