/**
 * Workspaces, their members and their budgets, as the public API's `workspaces.*` calls carry
 * them.
 *
 * **Details**
 *
 * Field names are the public API's (`default_text_model`, `limit_usd`...). Settings of features
 * Switchyard does not have (guardrails, I/O logging, server tools) are reported at their off
 * values and refused when a request asks to turn them on. Money is in credits (USD). `cache` is
 * Switchyard's own: the embeddings cache switch (the SDKs ignore the extra field).
 *
 * @since 0.1.0
 */
import { Option, Schema, SchemaGetter } from "effect"
import { IntFromString } from "./Byok.ts"

/**
 * A budget's interval: the window its limit counts in, each starting at midnight UTC (weeks on
 * Monday); `lifetime` never resets.
 *
 * @since 0.1.0
 */
export const BudgetInterval = Schema.Literals(["daily", "weekly", "monthly", "lifetime"])

/**
 * @since 0.1.0
 */
export type BudgetInterval = typeof BudgetInterval.Type

/**
 * One workspace.
 *
 * @since 0.1.0
 */
export const WorkspaceRecord = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  slug: Schema.String,
  description: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.NullOr(Schema.String),
  created_by: Schema.NullOr(Schema.String),
  default_text_model: Schema.NullOr(Schema.String),
  default_image_model: Schema.NullOr(Schema.String),
  default_provider_sort: Schema.NullOr(Schema.String),
  default_guardrail_id: Schema.String,
  include_byok_in_budgets: Schema.Boolean,
  disabled_server_tools: Schema.NullOr(Schema.Array(Schema.String)),
  io_logging_api_key_ids: Schema.NullOr(Schema.Array(Schema.Int)),
  io_logging_sampling_rate: Schema.Finite,
  is_data_discount_logging_enabled: Schema.Boolean,
  is_observability_broadcast_enabled: Schema.Boolean,
  is_observability_io_logging_enabled: Schema.Boolean,
  /**
   * Whether the embeddings cache serves and keeps the workspace's vectors: the value a management
   * key set, else the config file's `workspaces.<slug>.cache`.
   *
   * @since 0.2.0
   */
  cache: Schema.Boolean,
  /**
   * The account-wide provider settings every request of the workspace's keys merges with its own
   * `provider` preferences: what a management key set, else the config file's
   * `workspaces.<slug>` (`only`: `null` allows every provider).
   *
   * @since 0.3.0
   */
  only: Schema.NullOr(Schema.Array(Schema.String)),
  /** @since 0.3.0 */
  ignore: Schema.Array(Schema.String),
  /** @since 0.3.0 */
  data_collection: Schema.Literals(["allow", "deny"]),
  /** @since 0.3.0 */
  zdr: Schema.Boolean
})

/**
 * @since 0.1.0
 */
export type WorkspaceRecord = typeof WorkspaceRecord.Type

const Name = Schema.String.check(
  Schema.isMinLength(1, { message: "name must not be empty" }),
  Schema.isMaxLength(100, { message: "name must be at most 100 characters" })
)

const Slug = Schema.String.check(
  Schema.isPattern(/^[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?$/u, {
    message: "slug must be 1 to 50 lowercase letters, digits and inner hyphens"
  })
)

const Description = Schema.NullOr(Schema.String.check(Schema.isMaxLength(1000, { message: "description must be at most 1000 characters" })))
const ModelSetting = Schema.NullOr(Schema.String.check(Schema.isMaxLength(200, { message: "must be at most 200 characters" })))
const ProviderSort = Schema.NullOr(Schema.Literals(["price", "throughput", "latency", "exacto"]))

/** `true`/`false` turns the embeddings cache on or off; `null` leaves it to the config file. */
const CacheSetting = Schema.NullOr(Schema.Boolean)

/**
 * The settings of features Switchyard does not have; accepted only at their off values.
 *
 * @since 0.1.0
 */
const unsupported = {
  disabled_server_tools: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  io_logging_api_key_ids: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Int))),
  io_logging_sampling_rate: Schema.optionalKey(Schema.Finite),
  is_data_discount_logging_enabled: Schema.optionalKey(Schema.Boolean),
  is_observability_broadcast_enabled: Schema.optionalKey(Schema.Boolean),
  is_observability_io_logging_enabled: Schema.optionalKey(Schema.Boolean)
}

/**
 * `POST /workspaces`.
 *
 * @since 0.1.0
 */
export const CreateWorkspaceBody = Schema.Struct({
  name: Name,
  slug: Slug,
  description: Schema.optionalKey(Description),
  default_text_model: Schema.optionalKey(ModelSetting),
  default_image_model: Schema.optionalKey(ModelSetting),
  default_provider_sort: Schema.optionalKey(ProviderSort),
  cache: Schema.optionalKey(CacheSetting),
  ...unsupported
})

/**
 * @since 0.1.0
 */
export type CreateWorkspaceBody = typeof CreateWorkspaceBody.Type

const ProviderSlugs = Schema.Array(Schema.String.check(
  Schema.isMinLength(1, { message: "a provider slug must not be empty" }),
  Schema.isMaxLength(200, { message: "a provider slug must be at most 200 characters" })
)).check(Schema.isMaxLength(200, { message: "at most 200 provider slugs" }))

/**
 * The account-wide provider settings a management key set for a workspace, over the config
 * file's: each key present replaces the file's value of that setting.
 *
 * @since 0.3.0
 */
export const RoutingSettings = Schema.Struct({
  only: Schema.optionalKey(ProviderSlugs),
  ignore: Schema.optionalKey(ProviderSlugs),
  data_collection: Schema.optionalKey(Schema.Literals(["allow", "deny"])),
  zdr: Schema.optionalKey(Schema.Boolean)
})

/**
 * @since 0.3.0
 */
export type RoutingSettings = typeof RoutingSettings.Type

/**
 * `PATCH /workspaces/{id}`: omitted fields stay, `null` clears (for `only`, `ignore`,
 * `data_collection` and `zdr`: the config file's value applies again). A field the body does not
 * know is refused (400).
 *
 * @since 0.1.0
 */
export const UpdateWorkspaceBody = Schema.Struct({
  name: Schema.optionalKey(Name),
  slug: Schema.optionalKey(Slug),
  description: Schema.optionalKey(Description),
  default_text_model: Schema.optionalKey(ModelSetting),
  default_image_model: Schema.optionalKey(ModelSetting),
  default_provider_sort: Schema.optionalKey(ProviderSort),
  cache: Schema.optionalKey(CacheSetting),
  only: Schema.optionalKey(Schema.NullOr(ProviderSlugs)),
  ignore: Schema.optionalKey(Schema.NullOr(ProviderSlugs)),
  data_collection: Schema.optionalKey(Schema.NullOr(Schema.Literals(["allow", "deny"]))),
  zdr: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  ...unsupported
})

/**
 * @since 0.1.0
 */
export type UpdateWorkspaceBody = typeof UpdateWorkspaceBody.Type

/**
 * The unsupported settings a body turns on, by name; empty when it asks for nothing Switchyard
 * lacks.
 *
 * @since 0.1.0
 */
export const unsupportedSettings = (body: CreateWorkspaceBody | UpdateWorkspaceBody): ReadonlyArray<string> => {
  const on: Array<string> = []
  if ((body.disabled_server_tools ?? []).length > 0) on.push("disabled_server_tools")
  if ((body.io_logging_api_key_ids ?? []).length > 0) on.push("io_logging_api_key_ids")
  if (body.io_logging_sampling_rate !== undefined && body.io_logging_sampling_rate !== 0) on.push("io_logging_sampling_rate")
  if (body.is_data_discount_logging_enabled === true) on.push("is_data_discount_logging_enabled")
  if (body.is_observability_broadcast_enabled === true) on.push("is_observability_broadcast_enabled")
  if (body.is_observability_io_logging_enabled === true) on.push("is_observability_io_logging_enabled")
  return on
}

/**
 * A workspace by id or slug (`GET|PATCH|DELETE /workspaces/{id}`).
 *
 * @since 0.1.0
 */
export const WorkspaceRefParams = { id: Schema.String.check(Schema.isMinLength(1)) }

/**
 * The query of `GET /workspaces` and `GET /workspaces/{id}/members`.
 *
 * @since 0.1.0
 */
export const PageQuery = {
  offset: Schema.optionalKey(IntFromString(0, 1_000_000_000, "offset")),
  limit: Schema.optionalKey(IntFromString(1, 100, "limit"))
}

/**
 * The query of `DELETE /workspaces/{id}`.
 *
 * @since 0.1.0
 */
export const DeleteWorkspaceQuery = {
  confirm_default_workspace_deletion: Schema.optionalKey(Schema.Literals(["true", "false"]).pipe(
    Schema.decodeTo(Schema.Boolean, {
      decode: SchemaGetter.transform((s) => s === "true"),
      encode: SchemaGetter.transform((b) => (b ? "true" : "false"))
    })
  ))
}

/**
 * @since 0.1.0
 */
export const WorkspaceResponse = Schema.Struct({ data: WorkspaceRecord })

/**
 * @since 0.1.0
 */
export const WorkspaceList = Schema.Struct({ data: Schema.Array(WorkspaceRecord), total_count: Schema.Int })

/**
 * @since 0.1.0
 */
export const Deleted = Schema.Struct({ deleted: Schema.Literal(true) })

/**
 * A member's role in a workspace: `admin`s manage the workspace, its members and budgets.
 *
 * @since 0.1.0
 */
export const MemberRole = Schema.Literals(["admin", "member"])

/**
 * @since 0.1.0
 */
export type MemberRole = typeof MemberRole.Type

/**
 * One user's membership of a workspace.
 *
 * @since 0.1.0
 */
export const WorkspaceMember = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  workspace_id: Schema.String,
  role: MemberRole,
  created_at: Schema.String
})

/**
 * @since 0.1.0
 */
export type WorkspaceMember = typeof WorkspaceMember.Type

/**
 * @since 0.1.0
 */
export const MemberList = Schema.Struct({ data: Schema.Array(WorkspaceMember), total_count: Schema.Int })

const UserId = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9_.@:-]{1,128}$/u, {
    message: "each user id must be 1 to 128 letters, digits or . _ @ : -"
  })
)

/**
 * `POST /workspaces/{id}/members/add` and `.../remove`.
 *
 * @since 0.1.0
 */
export const MembersBody = Schema.Struct({
  user_ids: Schema.Array(UserId).check(
    Schema.isMinLength(1, { message: "user_ids must name at least one user" }),
    Schema.isMaxLength(100, { message: "user_ids may name at most 100 users" })
  )
})

/**
 * @since 0.1.0
 */
export const MembersAdded = Schema.Struct({ added_count: Schema.Int, data: Schema.Array(WorkspaceMember) })

/**
 * @since 0.1.0
 */
export const MembersRemoved = Schema.Struct({ removed_count: Schema.Int })

/**
 * One budget. `reset_interval` is `null` for the lifetime budget, as the public API has it.
 *
 * @since 0.1.0
 */
export const WorkspaceBudget = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  limit_usd: Schema.Finite,
  reset_interval: Schema.NullOr(Schema.Literals(["daily", "weekly", "monthly"])),
  created_at: Schema.String,
  updated_at: Schema.String
})

/**
 * @since 0.1.0
 */
export type WorkspaceBudget = typeof WorkspaceBudget.Type

/**
 * `/workspaces/{workspace_ref}/budgets/{interval}`.
 *
 * @since 0.1.0
 */
export const BudgetParams = {
  workspace_ref: Schema.String.check(Schema.isMinLength(1)),
  interval: BudgetInterval
}

/**
 * `/workspaces/{workspace_ref}/budgets`.
 *
 * @since 0.1.0
 */
export const BudgetsParams = { workspace_ref: Schema.String.check(Schema.isMinLength(1)) }

/**
 * `PUT /workspaces/{workspace_ref}/budgets/{interval}`.
 *
 * @since 0.1.0
 */
export const UpsertBudgetBody = Schema.Struct({
  limit_usd: Schema.Finite.check(
    Schema.isGreaterThanOrEqualTo(0, { message: "limit_usd must be at least 0" }),
    Schema.isLessThanOrEqualTo(1_000_000_000, { message: "limit_usd must be at most 1000000000" })
  ),
  include_byok_in_budgets: Schema.optionalKey(Schema.Boolean)
})

/**
 * @since 0.1.0
 */
export const BudgetResponse = Schema.Struct({ data: WorkspaceBudget, include_byok_in_budgets: Schema.Boolean })

/**
 * @since 0.1.0
 */
export const BudgetList = Schema.Struct({ data: Schema.Array(WorkspaceBudget), include_byok_in_budgets: Schema.Boolean })

const routingKeys = ["only", "ignore", "data_collection", "zdr"] as const

/**
 * The workspace's provider settings after an update: each of `only`, `ignore`, `data_collection`
 * and `zdr` the body sets replaces the stored one, each it sets to `null` is dropped (the config
 * file decides again); `undefined` when the body touches none of them.
 *
 * @since 0.3.0
 */
export const patchRouting = (current: RoutingSettings | null, body: UpdateWorkspaceBody): RoutingSettings | undefined => {
  if (!routingKeys.some((key) => body[key] !== undefined)) return undefined
  const next: Record<string, unknown> = { ...current }
  for (const key of routingKeys) {
    const value = body[key]
    if (value === null) delete next[key]
    else if (value !== undefined) next[key] = value
  }
  return next as RoutingSettings
}

const StoredRouting = Schema.fromJsonString(RoutingSettings)

/**
 * The stored form of a workspace's provider settings (JSON text); `null` when none is set.
 *
 * @since 0.3.0
 */
export const encodeRouting = (routing: RoutingSettings): string | null =>
  Object.keys(routing).length === 0 ? null : JSON.stringify(routing)

/**
 * The provider settings of a stored row; `null` when none (or unreadable text: the config
 * file's settings apply).
 *
 * @since 0.3.0
 */
export const decodeRouting = (stored: string | null): RoutingSettings | null =>
  stored === null ? null : Option.getOrNull(Schema.decodeUnknownOption(StoredRouting)(stored))
