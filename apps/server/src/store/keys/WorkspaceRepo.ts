import { fromSqlError } from "@switchyard/core/store/StoreUnavailable"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import { decodeRouting, encodeRouting } from "@switchyard/core/schema/Workspace"
import type { BudgetInterval, MemberRole, RoutingSettings, WorkspaceBudget, WorkspaceMember, WorkspaceRecord } from "@switchyard/core/schema/Workspace"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import { flag, type Flag, flagOrNull, type Instant, iso, isoOrNull } from "../sql/Columns.ts"
import { StoreChanges } from "../sql/StoreChanges.ts"

interface WorkspaceRow {
  readonly id: string
  readonly slug: string
  readonly name: string
  readonly description: string | null
  readonly created_by: string | null
  readonly default_text_model: string | null
  readonly default_image_model: string | null
  readonly default_provider_sort: string | null
  readonly include_byok_in_budgets: Flag
  readonly cache: Flag | null
  readonly routing: string | null
  readonly created_at: Instant
  readonly updated_at: Instant | null
}

interface MemberRow {
  readonly id: string
  readonly user_id: string
  readonly workspace_id: string
  readonly role: string
  readonly created_at: Instant
}

interface BudgetRow {
  readonly id: string
  readonly workspace_id: string
  readonly interval: BudgetInterval
  readonly limit_nanos: string
  readonly created_at: Instant
  readonly updated_at: Instant
}

/**
 * A workspace as stored: `cache` is `null` while no management key has set it (the config file
 * decides; see `Workspaces.cacheEnabled`).
 */
export type StoredWorkspace = Omit<WorkspaceRecord, "cache" | "only" | "ignore" | "data_collection" | "zdr"> & {
  readonly cache: boolean | null
  /** The provider settings a management key set over the config file's; `null` when none. */
  readonly routing: RoutingSettings | null
}

const toRecord = (row: WorkspaceRow): StoredWorkspace => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  description: row.description,
  created_at: iso(row.created_at),
  updated_at: isoOrNull(row.updated_at),
  created_by: row.created_by,
  default_text_model: row.default_text_model,
  default_image_model: row.default_image_model,
  default_provider_sort: row.default_provider_sort,
  default_guardrail_id: "",
  include_byok_in_budgets: flag(row.include_byok_in_budgets),
  disabled_server_tools: null,
  io_logging_api_key_ids: null,
  io_logging_sampling_rate: 0,
  is_data_discount_logging_enabled: false,
  is_observability_broadcast_enabled: false,
  is_observability_io_logging_enabled: false,
  cache: flagOrNull(row.cache),
  routing: decodeRouting(row.routing)
})

/** The first-start role was called `owner`; it is an admin. */
const roleOf = (role: string): MemberRole => (role === "member" ? "member" : "admin")

const toMember = (row: MemberRow): WorkspaceMember => ({
  id: row.id,
  user_id: row.user_id,
  workspace_id: row.workspace_id,
  role: roleOf(row.role),
  created_at: iso(row.created_at)
})

const toBudget = (row: BudgetRow): WorkspaceBudget => ({
  id: row.id,
  workspace_id: row.workspace_id,
  limit_usd: creditsFromNanos(BigInt(row.limit_nanos)),
  reset_interval: row.interval === "lifetime" ? null : row.interval,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

const workspaceColumns = `w.id, w.slug, w.name, w.description, w.created_by, w.default_text_model, w.default_image_model,
  w.default_provider_sort, w.include_byok_in_budgets, w.cache, w.routing, w.created_at, w.updated_at`

/** A workspace the user is a member of, with the user's role in it. */
export interface Membership {
  readonly workspace: StoredWorkspace
  readonly role: MemberRole
}

export interface WorkspaceSettings {
  readonly name?: string
  readonly slug?: string
  readonly description?: string | null
  readonly default_text_model?: string | null
  readonly default_image_model?: string | null
  readonly default_provider_sort?: string | null
  /** `null` leaves the embeddings cache to the config file. */
  readonly cache?: boolean | null
  /** The provider settings over the config file's, whole (see `Workspace.patchRouting`). */
  readonly routing?: (current: RoutingSettings | null) => RoutingSettings | undefined
}

/** Why a workspace or a member could not be removed. */
export type Blocked =
  | { readonly _tag: "ActiveKeys"; readonly count: number; readonly userId?: string }
  | { readonly _tag: "Interns"; readonly count: number }
  | { readonly _tag: "LastAdmin"; readonly userId: string }

// A workspace row held until the transaction ends: locked on PostgreSQL; SQLite's `BEGIN IMMEDIATE` already holds the only write lock.
const lockWorkspaceOn = (sql: SqlClient.SqlClient) => (workspaceId: string) =>
  sql.onDialectOrElse({
    pg: () => Effect.asVoid(sql`SELECT id FROM workspaces WHERE id = ${workspaceId} FOR UPDATE`),
    orElse: () => Effect.void
  })
// Users whose default workspace was `workspaceId` (among `userIds`, when given) fall back to
// their earliest other membership, when they have one.
const moveDefaultsOn = (sql: SqlClient.SqlClient) => (workspaceId: string, userIds?: ReadonlyArray<string>) => {
  const other = sql`FROM memberships m WHERE m.user_id = users.id AND m.workspace_id <> ${workspaceId}`
  return sql`UPDATE users SET default_workspace_id =
      (SELECT m.workspace_id ${other} ORDER BY m.created_at, m.workspace_id LIMIT 1)
    WHERE default_workspace_id = ${workspaceId} AND EXISTS (SELECT 1 ${other})
      ${userIds === undefined ? sql`` : sql`AND users.id IN ${sql.in(userIds)}`}`
}

/** A workspace's members: listed, added, removed (never the last admin, never one with active keys). */
const memberStatements = (sql: SqlClient.SqlClient) => {
  const lockWorkspace = lockWorkspaceOn(sql)
  const moveDefaults = moveDefaultsOn(sql)
  const members = (workspaceId: string, offset: number, limit: number) =>
    Effect.gen(function*() {
      const rows = yield* sql<MemberRow>`SELECT id, user_id, workspace_id, role, created_at FROM memberships
          WHERE workspace_id = ${workspaceId} ORDER BY created_at, user_id LIMIT ${limit} OFFSET ${offset}`.pipe(fromSqlError("workspaces"))
      const total = yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM memberships WHERE workspace_id = ${workspaceId}`.pipe(
        fromSqlError("workspaces")
      )
      return { data: rows.map(toMember), total: Number(total[0]!.n) }
    })

  const addMembers = (workspaceId: string, userIds: ReadonlyArray<string>, now: Date) =>
    sql.withTransaction(Effect.gen(function*() {
      const added: Array<WorkspaceMember> = []
      for (const userId of new Set(userIds)) {
        yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES (${userId}, ${userId}, ${workspaceId})
          ON CONFLICT (id) DO NOTHING`
        const rows = yield* sql<MemberRow>`INSERT INTO memberships (user_id, workspace_id, role, id, created_at)
            VALUES (${userId}, ${workspaceId}, 'member', ${Crypto.randomUUID()}, ${now})
            ON CONFLICT (user_id, workspace_id) DO NOTHING
            RETURNING id, user_id, workspace_id, role, created_at`
        if (rows[0] !== undefined) added.push(toMember(rows[0]))
      }
      return added
    })).pipe(fromSqlError("workspaces"))

  const removeMembers = (workspaceId: string, userIds: ReadonlyArray<string>) =>
    sql.withTransaction(Effect.gen(function*() {
      const ids = [...new Set(userIds)]
      yield* lockWorkspace(workspaceId)
      const keyed = yield* sql<{ user_id: string; n: number }>`SELECT user_id, CAST(count(*) AS integer) AS n FROM api_keys
          WHERE workspace_id = ${workspaceId} AND deleted_at IS NULL AND user_id IN ${sql.in(ids)}
          GROUP BY user_id ORDER BY user_id`
      if (keyed[0] !== undefined) {
        return { _tag: "ActiveKeys", count: Number(keyed[0].n), userId: keyed[0].user_id } satisfies Blocked as Blocked
      }
      const admins = yield* sql<{ user_id: string }>`SELECT user_id FROM memberships
          WHERE workspace_id = ${workspaceId} AND role <> 'member'`
      const left = admins.filter((a) => !ids.includes(a.user_id))
      if (admins.length > 0 && left.length === 0) {
        return { _tag: "LastAdmin", userId: admins[0]!.user_id } satisfies Blocked as Blocked
      }
      const removed = yield* sql`DELETE FROM memberships WHERE workspace_id = ${workspaceId} AND user_id IN ${sql.in(ids)}
          RETURNING user_id`
      yield* moveDefaults(workspaceId, ids)
      return { removed: removed.length }
    })).pipe(fromSqlError("workspaces"))
  return { members, addMembers, removeMembers }
}

/** A workspace's budgets and whether BYOK spend counts against them. */
const budgetStatements = (sql: SqlClient.SqlClient) => {
  const includeByok = (workspaceId: string) =>
    sql<{ b: Flag }>`SELECT include_byok_in_budgets AS b FROM workspaces WHERE id = ${workspaceId}`.pipe(
      fromSqlError("workspaces"),
      Effect.map((rows) => rows[0] !== undefined && flag(rows[0].b))
    )

  const budgetRows = (workspaceId: string) =>
    sql<BudgetRow>`SELECT id, workspace_id, interval, CAST(limit_nanos AS text) AS limit_nanos, created_at, updated_at
        FROM workspace_budgets WHERE workspace_id = ${workspaceId}
        ORDER BY CASE interval WHEN 'daily' THEN 0 WHEN 'weekly' THEN 1 WHEN 'monthly' THEN 2 ELSE 3 END`.pipe(fromSqlError("workspaces"))

  const budgets = (workspaceId: string) =>
    Effect.gen(function*() {
      const rows = yield* budgetRows(workspaceId)
      return { data: rows.map(toBudget), includeByok: yield* includeByok(workspaceId) }
    })

  const budgetLimits = (workspaceId: string) =>
    Effect.map(budgetRows(workspaceId), (rows) => new Map(rows.map((r) => [r.interval, BigInt(r.limit_nanos)] as const)))

  const setBudget = (workspaceId: string, interval: BudgetInterval, limitNanos: bigint, include: boolean | undefined, now: Date) =>
    sql.withTransaction(Effect.gen(function*() {
      if (include !== undefined) {
        yield* sql`UPDATE workspaces SET include_byok_in_budgets = ${include}, updated_at = ${now} WHERE id = ${workspaceId}`
      }
      const rows = yield* sql<BudgetRow>`INSERT INTO workspace_budgets (id, workspace_id, interval, limit_nanos, created_at, updated_at)
          VALUES (${Crypto.randomUUID()}, ${workspaceId}, ${interval}, CAST(${limitNanos.toString()} AS bigint), ${now}, ${now})
          ON CONFLICT (workspace_id, interval) DO UPDATE SET limit_nanos = EXCLUDED.limit_nanos, updated_at = EXCLUDED.updated_at
          RETURNING id, workspace_id, interval, CAST(limit_nanos AS text) AS limit_nanos, created_at, updated_at`
      return toBudget(rows[0]!)
    })).pipe(fromSqlError("workspaces"))

  const deleteBudget = (workspaceId: string, interval: BudgetInterval) =>
    sql`DELETE FROM workspace_budgets WHERE workspace_id = ${workspaceId} AND interval = ${interval} RETURNING id`.pipe(
      fromSqlError("workspaces"),
      Effect.map((rows) => rows.length > 0)
    )
  return { budgets, budgetLimits, setBudget, deleteBudget }
}

/**
 * Workspaces, memberships and budgets in SQL. Every read by reference goes through the user's
 * memberships, so a workspace the user does not belong to is indistinguishable from one that
 * does not exist.
 */
export class WorkspaceRepo extends Context.Service<WorkspaceRepo, {
  /** The user's membership of the workspace with this id or slug. */
  readonly find: (userId: string, ref: string) => Effect.Effect<Option.Option<Membership>, StoreUnavailable>
  readonly list: (userId: string, offset: number, limit: number) => Effect.Effect<{ readonly data: ReadonlyArray<StoredWorkspace>; readonly total: number }, StoreUnavailable>
  /** `None` when the slug is taken. The creator becomes its admin. */
  readonly create: (userId: string, settings: WorkspaceSettings & { readonly name: string; readonly slug: string }, now: Date) => Effect.Effect<Option.Option<StoredWorkspace>, StoreUnavailable>
  /** `None` when the new slug is taken. */
  readonly update: (workspaceId: string, settings: WorkspaceSettings, now: Date) => Effect.Effect<Option.Option<StoredWorkspace>, StoreUnavailable>
  readonly remove: (workspaceId: string, now: Date) => Effect.Effect<Option.Option<Blocked>, StoreUnavailable>
  readonly members: (workspaceId: string, offset: number, limit: number) => Effect.Effect<{ readonly data: ReadonlyArray<WorkspaceMember>; readonly total: number }, StoreUnavailable>
  /** Adds users (creating unknown user ids) as members; returns the memberships added. */
  readonly addMembers: (workspaceId: string, userIds: ReadonlyArray<string>, now: Date) => Effect.Effect<ReadonlyArray<WorkspaceMember>, StoreUnavailable>
  readonly removeMembers: (workspaceId: string, userIds: ReadonlyArray<string>) => Effect.Effect<{ readonly removed: number } | Blocked, StoreUnavailable>
  readonly budgets: (workspaceId: string) => Effect.Effect<{ readonly data: ReadonlyArray<WorkspaceBudget>; readonly includeByok: boolean }, StoreUnavailable>
  readonly setBudget: (workspaceId: string, interval: BudgetInterval, limitNanos: bigint, includeByok: boolean | undefined, now: Date) => Effect.Effect<WorkspaceBudget, StoreUnavailable>
  /** Limits in nanos by interval, for the ordering rule. */
  readonly budgetLimits: (workspaceId: string) => Effect.Effect<ReadonlyMap<BudgetInterval, bigint>, StoreUnavailable>
  readonly deleteBudget: (workspaceId: string, interval: BudgetInterval) => Effect.Effect<boolean, StoreUnavailable>
}>()("@switchyard/server/store/WorkspaceRepo") {
  static readonly layer = Layer.effect(
    WorkspaceRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const changes = yield* StoreChanges
      // A change to a workspace's settings or budgets reaches what every replica keeps of its keys' facts.
      const told = (workspaceId: string) => <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E> =>
        Effect.tap(self, () => changes.changed({ _tag: "Workspace", workspaceId }))

      const find = (userId: string, ref: string) =>
        sql<WorkspaceRow & { readonly role: string }>`SELECT ${sql.unsafe(workspaceColumns)}, m.role
            FROM workspaces w JOIN memberships m ON m.workspace_id = w.id AND m.user_id = ${userId}
            WHERE w.deleted_at IS NULL AND (w.id = ${ref} OR w.slug = ${ref})`.pipe(
          fromSqlError("workspaces"),
          Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => ({ workspace: toRecord(row), role: roleOf(row.role) })))
        )

      const byId = (workspaceId: string) =>
        sql<WorkspaceRow>`SELECT ${sql.unsafe(workspaceColumns)} FROM workspaces w WHERE w.id = ${workspaceId}`.pipe(
          fromSqlError("workspaces"),
          Effect.map((rows) => toRecord(rows[0]!))
        )

      const slugTaken = (slug: string, except: string | null) =>
        sql<{ n: number }>`SELECT 1 AS n FROM workspaces WHERE slug = ${slug} AND deleted_at IS NULL
            AND (CAST(${except} AS text) IS NULL OR id <> ${except})`.pipe(fromSqlError("workspaces"), Effect.map((rows) => rows.length > 0))

      // Slugs are checked then written in one transaction: PostgreSQL serializes those transactions
      // with an advisory lock; SQLite's `BEGIN IMMEDIATE` already holds the only write lock.
      const lockSlugs = sql.onDialectOrElse({
        pg: () => Effect.asVoid(sql`SELECT pg_advisory_xact_lock(7032)`),
        orElse: () => Effect.void
      })
      const lockWorkspace = lockWorkspaceOn(sql)
      const moveDefaults = moveDefaultsOn(sql)
      const { members, addMembers, removeMembers } = memberStatements(sql)
      const { budgets, budgetLimits, setBudget, deleteBudget } = budgetStatements(sql)

      const list = (userId: string, offset: number, limit: number) =>
        Effect.gen(function*() {
          const rows = yield* sql<WorkspaceRow>`SELECT ${sql.unsafe(workspaceColumns)}
              FROM workspaces w JOIN memberships m ON m.workspace_id = w.id AND m.user_id = ${userId}
              WHERE w.deleted_at IS NULL ORDER BY w.created_at, w.id LIMIT ${limit} OFFSET ${offset}`.pipe(fromSqlError("workspaces"))
          const total = yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n
              FROM workspaces w JOIN memberships m ON m.workspace_id = w.id AND m.user_id = ${userId}
              WHERE w.deleted_at IS NULL`.pipe(fromSqlError("workspaces"))
          return { data: rows.map(toRecord), total: Number(total[0]!.n) }
        })

      const create = (userId: string, settings: WorkspaceSettings & { readonly name: string; readonly slug: string }, now: Date) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* lockSlugs
          if (yield* slugTaken(settings.slug, null)) return Option.none<StoredWorkspace>()
          const id = Crypto.randomUUID()
          yield* sql`INSERT INTO workspaces (id, slug, name, description, created_by, default_text_model, default_image_model,
              default_provider_sort, cache, created_at)
            VALUES (${id}, ${settings.slug}, ${settings.name}, ${settings.description ?? null}, ${userId},
              ${settings.default_text_model ?? null}, ${settings.default_image_model ?? null},
              ${settings.default_provider_sort ?? null}, ${settings.cache ?? null}, ${now})`
          yield* sql`INSERT INTO memberships (user_id, workspace_id, role, id, created_at)
            VALUES (${userId}, ${id}, 'admin', ${Crypto.randomUUID()}, ${now})`
          return Option.some(yield* byId(id))
        })).pipe(fromSqlError("workspaces"))

      // The stored settings with the change made, as the column holds them (`null`: none left);
      // `undefined` when nothing changes.
      const routingAfter = (workspaceId: string, change: NonNullable<WorkspaceSettings["routing"]>) =>
        Effect.map(
          sql<{ routing: string | null }>`SELECT routing FROM workspaces WHERE id = ${workspaceId}`,
          (rows) => {
            const next = change(decodeRouting(rows[0]?.routing ?? null))
            return next === undefined ? undefined : encodeRouting(next)
          }
        )

      const update = (workspaceId: string, settings: WorkspaceSettings, now: Date) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* lockSlugs
          if (settings.slug !== undefined && (yield* slugTaken(settings.slug, workspaceId))) return Option.none<StoredWorkspace>()
          const changes = Object.fromEntries(Object.entries({
            name: settings.name,
            slug: settings.slug,
            description: settings.description,
            default_text_model: settings.default_text_model,
            default_image_model: settings.default_image_model,
            default_provider_sort: settings.default_provider_sort,
            cache: settings.cache,
            routing: settings.routing === undefined ? undefined : yield* routingAfter(workspaceId, settings.routing)
          }).filter(([, value]) => value !== undefined))
          if (Object.keys(changes).length > 0) {
            yield* sql`UPDATE workspaces SET ${sql.update({ ...changes, updated_at: now })} WHERE id = ${workspaceId}`
          }
          return Option.some(yield* byId(workspaceId))
        })).pipe(fromSqlError("workspaces"))

      const remove = (workspaceId: string, now: Date) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* lockWorkspace(workspaceId)
          const keys = yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM api_keys
              WHERE workspace_id = ${workspaceId} AND deleted_at IS NULL`
          if (Number(keys[0]!.n) > 0) return Option.some<Blocked>({ _tag: "ActiveKeys", count: Number(keys[0]!.n) })
          const interns = yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM interns WHERE workspace_id = ${workspaceId}`
          if (Number(interns[0]!.n) > 0) return Option.some<Blocked>({ _tag: "Interns", count: Number(interns[0]!.n) })
          // Members whose default this was fall back to another workspace of theirs, when they have one.
          yield* moveDefaults(workspaceId)
          yield* sql`DELETE FROM memberships WHERE workspace_id = ${workspaceId}`
          yield* sql`DELETE FROM workspace_budgets WHERE workspace_id = ${workspaceId}`
          yield* sql`DELETE FROM byok_credentials WHERE workspace_id = ${workspaceId}`
          yield* sql`UPDATE workspaces SET deleted_at = ${now}, updated_at = ${now} WHERE id = ${workspaceId}`
          return Option.none<Blocked>()
        })).pipe(fromSqlError("workspaces"))

      return WorkspaceRepo.of({
        find,
        list,
        create,
        update: (workspaceId, settings, now) => update(workspaceId, settings, now).pipe(told(workspaceId)),
        remove: (workspaceId, now) => remove(workspaceId, now).pipe(told(workspaceId)),
        members,
        addMembers,
        removeMembers,
        budgets,
        setBudget: (workspaceId, interval, limitNanos, include, now) =>
          setBudget(workspaceId, interval, limitNanos, include, now).pipe(told(workspaceId)),
        budgetLimits,
        deleteBudget: (workspaceId, interval) => deleteBudget(workspaceId, interval).pipe(told(workspaceId))
      })
    })
  )
}
