import type { CallerShape } from "@switchyard/core/api/Authorization"
import { Api } from "@switchyard/core/api/Api"
import { creditsFromNanos, nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import { BadRequest, Forbidden, NotFound } from "@switchyard/core/schema/ApiError"
import { patchRouting, unsupportedSettings } from "@switchyard/core/schema/Workspace"
import type { BudgetInterval, CreateWorkspaceBody, UpdateWorkspaceBody } from "@switchyard/core/schema/Workspace"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { cacheEnabled, routingOf, Workspaces } from "../pipeline/Workspaces.ts"
import { refuseNul } from "../http/NulCharacters.ts"
import { type StoredWorkspace, WorkspaceRepo } from "../store/keys/WorkspaceRepo.ts"
import { AuditLog } from "../store/audit/AuditLog.ts"
import * as Access from "../auth/Access.ts"
import { currentTime, fieldsOf, requireManagement, workspaceScoped } from "./Management.ts"
import * as StoreFailure from "../http/StoreFailure.ts"


const noWorkspace = (ref: string) => new NotFound({ message: `No workspace ${ref.slice(0, 100)}` })

/**
 * The workspace named by id or slug, for a management key whose user is a member of it; 404
 * otherwise, exactly as for a workspace that does not exist.
 */
const membership = (repo: WorkspaceRepo["Service"], ref: string) =>
  Effect.gen(function*() {
    const caller = yield* requireManagement
    const found = yield* repo.find(caller.userId, ref)
    // A management key of workspace scope reaches its own workspace only.
    if (Option.isNone(found) || (workspaceScoped(caller) && found.value.workspace.id !== caller.workspaceId)) {
      // A person with no role in it: the role it needs (Access.ts).
      if (caller.person !== undefined) return yield* new Forbidden({ message: Access.noWorkspaceRole(ref) })
      return yield* noWorkspace(ref)
    }
    return { caller, ...found.value }
  })

/** As {@link membership}, for operations only the workspace's admins may do (403 for members). */
const administered = (repo: WorkspaceRepo["Service"], ref: string, what: string) =>
  Effect.gen(function*() {
    const found = yield* membership(repo, ref)
    if (found.role !== "admin") {
      return yield* new Forbidden({
        message: `Only an admin of workspace ${found.workspace.slug} may ${what}`,
        metadata: { role: found.role }
      })
    }
    return found
  })

/** The workspaces the caller reaches, a page of them: its own only, for a key of workspace scope. */
const listed = (repo: WorkspaceRepo["Service"], caller: CallerShape, offset: number, limit: number) =>
  Effect.gen(function*() {
    if (!workspaceScoped(caller)) return yield* repo.list(caller.userId, offset, limit)
    const own = yield* repo.find(caller.userId, caller.workspaceId)
    if (Option.isNone(own)) return { data: [], total: 0 }
    return { data: offset === 0 && limit > 0 ? [own.value.workspace] : [], total: 1 }
  })

/** A key of workspace scope reaches its own workspace only: it creates none. */
const refuseScoped = (caller: CallerShape) =>
  workspaceScoped(caller)
    ? Effect.fail(new Forbidden({ message: "A management key of workspace scope reaches its own workspace only: it cannot create workspaces" }))
    : Effect.void

const refuseUnsupported = (body: CreateWorkspaceBody | UpdateWorkspaceBody) => {
  const on = unsupportedSettings(body)
  return on.length === 0 ? Effect.void : Effect.fail(new BadRequest({
    message: `Switchyard does not implement ${on.join(", ")}; leave ${on.length === 1 ? "it" : "them"} unset or off`,
    metadata: { fields: on }
  }))
}

/** The fields of a workspace's provider settings, stored together as its `routing`. */
const routingFields: ReadonlySet<string> = new Set(["only", "ignore", "data_collection", "zdr"])

const slugTaken = (slug: string) =>
  new BadRequest({ message: `The slug ${slug} is taken by another workspace`, metadata: { field: "slug" } })

const intervalOrder: ReadonlyArray<BudgetInterval> = ["daily", "weekly", "monthly", "lifetime"]

/**
 * Budget limits must strictly decrease as the interval narrows (lifetime > monthly > weekly >
 * daily), as the public API requires.
 */
const checkBudgetOrder = (limits: ReadonlyMap<BudgetInterval, bigint>, interval: BudgetInterval, limit: bigint) => {
  const rank = intervalOrder.indexOf(interval)
  for (const [other, otherLimit] of limits) {
    const otherRank = intervalOrder.indexOf(other)
    if (otherRank > rank && !(limit < otherLimit)) {
      return Effect.fail(new BadRequest({
        message: `The ${interval} budget must be less than the ${other} budget (${creditsFromNanos(otherLimit)})`,
        metadata: { field: "limit_usd" }
      }))
    }
    if (otherRank < rank && !(limit > otherLimit)) {
      return Effect.fail(new BadRequest({
        message: `The ${interval} budget must be more than the ${other} budget (${creditsFromNanos(otherLimit)})`,
        metadata: { field: "limit_usd" }
      }))
    }
  }
  return Effect.void
}

/** Removes members from a workspace, refusing the last admin and members with active keys. */
const removeMembers = (repo: WorkspaceRepo["Service"], audit: AuditLog["Service"], ref: string, userIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const found = yield* administered(repo, ref, "remove members")
    const result = yield* audit.recorded(
      repo.removeMembers(found.workspace.id, userIds),
      (outcome) =>
        "removed" in outcome && outcome.removed > 0
          ? {
            action: "member.remove",
            target: { type: "workspace", id: found.workspace.id },
            workspaceId: found.workspace.id,
            before: { user_ids: [...new Set(userIds)] },
            after: { removed_count: outcome.removed }
          }
          : undefined
    )
    if ("removed" in result) return { removed_count: result.removed }
    if (result._tag === "LastAdmin") {
      return yield* new BadRequest({
        message: "A workspace keeps at least one admin: add another admin before removing the last one",
        metadata: { reason: "last_admin" }
      })
    }
    return yield* new BadRequest({
      message: `User ${result._tag === "ActiveKeys" ? result.userId : ""} still has ${result.count} active API key(s) in this workspace; delete them first`,
      metadata: { reason: "active_keys" }
  })
  })

/** Sets one of a workspace's budgets, in order with its others. */
const setBudget = (
  repo: WorkspaceRepo["Service"], audit: AuditLog["Service"],
  ref: string,
  interval: BudgetInterval,
  payload: { readonly limit_usd: number; readonly include_byok_in_budgets?: boolean | undefined }
) =>
  Effect.gen(function*() {
    const found = yield* administered(repo, ref, "set its budgets")
    const limit = nanosFromCredits(payload.limit_usd)
    if (limit === undefined || limit < 0n) {
      return yield* new BadRequest({ message: "limit_usd must be a non-negative amount of credits", metadata: { field: "limit_usd" } })
    }
    const limits = new Map(yield* repo.budgetLimits(found.workspace.id))
    limits.delete(interval)
    yield* checkBudgetOrder(limits, interval, limit)
    const before = (yield* repo.budgets(found.workspace.id)).data.find((b) => (b.reset_interval ?? "lifetime") === interval)
    const data = yield* audit.recorded(
      repo.setBudget(found.workspace.id, interval, limit, payload.include_byok_in_budgets, yield* currentTime),
      (budget) => ({
        action: "budget.set",
        target: { type: "budget", id: `${found.workspace.id}/${interval}` },
        workspaceId: found.workspace.id,
        before: before ?? null,
        after: budget
      })
    )
    const budgets = yield* repo.budgets(found.workspace.id)
    return { data, include_byok_in_budgets: budgets.includeByok }
  })

/** Deletes one of a workspace's budgets. */
const deleteBudget = (repo: WorkspaceRepo["Service"], audit: AuditLog["Service"], ref: string, interval: BudgetInterval) =>
  Effect.gen(function*() {
    const found = yield* administered(repo, ref, "delete its budgets")
    const before = (yield* repo.budgets(found.workspace.id)).data.find((b) => (b.reset_interval ?? "lifetime") === interval)
    const deleted = yield* audit.recorded(
      repo.deleteBudget(found.workspace.id, interval),
      (gone) =>
        gone
          ? {
            action: "budget.delete",
            target: { type: "budget", id: `${found.workspace.id}/${interval}` },
            workspaceId: found.workspace.id,
            before: before ?? null
          }
          : undefined
    )
    if (!deleted) {
      return yield* new NotFound({ message: `Workspace ${found.workspace.slug} has no ${interval} budget` })
    }
    return { deleted: true as const }
  })

export const WorkspacesHandlers = HttpApiBuilder.group(
  Api,
  "workspaces",
  Effect.fn(function*(handlers) {
    const repo = yield* WorkspaceRepo
    const keys = yield* ApiKeyStore
    const { catalog } = yield* CurrentCatalog
    const workspaces = yield* Workspaces
    const audit = yield* AuditLog
    // The cache switch and the provider settings as they apply: what a management key set, else
    // the config file's.
    const shown = ({ routing, ...workspace }: StoredWorkspace) => {
      const applied = routingOf(catalog, { slug: workspace.slug, cache: workspace.cache, routing })
      return {
        ...workspace,
        cache: cacheEnabled(catalog, { slug: workspace.slug, cache: workspace.cache, routing }),
        only: applied.only,
        ignore: applied.ignore,
        data_collection: applied.data_collection,
        zdr: applied.zdr
      }
    }
    const keysDefault = (userId: string) => Effect.map(keys.defaultWorkspaceOf(userId), Option.getOrUndefined)
    return handlers
      .handle("list", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const page = yield* listed(repo, yield* requireManagement, query.offset ?? 0, query.limit ?? 50)
          return { data: page.data.map(shown), total_count: page.total }
        })))
      .handle("create", ({ payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* Effect.tap(requireManagement, refuseScoped)
          yield* refuseNul(payload)
          yield* refuseUnsupported(payload)
          const created = yield* audit.recorded(
            repo.create(caller.userId, payload, yield* currentTime),
            Option.match({
              onNone: () => undefined,
              onSome: (workspace) => ({
                action: "workspace.create",
                target: { type: "workspace", id: workspace.id },
                workspaceId: workspace.id,
                after: workspace
              })
            })
          )
          if (Option.isNone(created)) return yield* slugTaken(payload.slug)
          return { data: shown(created.value) }
        })))
      .handle("get", ({ params }) => Effect.map(membership(repo, params.id), (found) => ({ data: shown(found.workspace) })).pipe(StoreFailure.answer))
      .handle("update", ({ params, payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          yield* refuseNul(payload)
          const found = yield* administered(repo, params.id, "change it")
          yield* refuseUnsupported(payload)
          // The provider settings are stored together: the audit entry records them as `routing`.
          const changed = [...new Set(Object.keys(payload).map((field) => (routingFields.has(field) ? "routing" : field)))]
          const updated = yield* audit.recorded(
            repo.update(found.workspace.id, {
              ...payload,
              routing: (current) => patchRouting(current, payload)
            }, yield* currentTime),
            Option.match({
              onNone: () => undefined,
              onSome: (workspace) => ({
                action: "workspace.update",
                target: { type: "workspace", id: workspace.id },
                workspaceId: workspace.id,
                before: fieldsOf(found.workspace, changed),
                after: fieldsOf(workspace, changed)
              })
            })
          )
          if (Option.isNone(updated)) return yield* slugTaken(payload.slug ?? "")
          yield* workspaces.forget(found.workspace.id)
          return { data: shown(updated.value) }
        })))
      .handle("delete", ({ params, query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const found = yield* administered(repo, params.id, "delete it")
          if (found.workspace.id === found.caller.workspaceId) {
            return yield* new BadRequest({ message: "A key cannot delete its own workspace; use a management key of another workspace" })
          }
          const fallback = yield* keysDefault(found.caller.userId)
          if (fallback === found.workspace.id && query.confirm_default_workspace_deletion !== true) {
            return yield* new BadRequest({
              message: "This is your default workspace; deleting it needs confirm_default_workspace_deletion=true",
              metadata: { field: "confirm_default_workspace_deletion" }
            })
          }
          const blocked = yield* audit.recorded(
            repo.remove(found.workspace.id, yield* currentTime),
            (refused) =>
              Option.isSome(refused) && refused.value._tag !== "LastAdmin" ? undefined : {
                action: "workspace.delete",
                target: { type: "workspace", id: found.workspace.id },
                workspaceId: found.workspace.id,
                before: found.workspace
              }
          )
          if (Option.isSome(blocked) && blocked.value._tag !== "LastAdmin") {
            const interns = blocked.value._tag === "Interns"
            return yield* new BadRequest({
              message: `Workspace ${found.workspace.slug} still has ${blocked.value.count} ${interns ? "intern(s)" : "active API key(s)"}; delete them first`,
              metadata: { reason: interns ? "interns" : "active_keys" }
            })
          }
          return { deleted: true as const }
        })))
      .handle("listMembers", ({ params, query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const found = yield* membership(repo, params.id)
          const page = yield* repo.members(found.workspace.id, query.offset ?? 0, query.limit ?? 50)
          return { data: page.data, total_count: page.total }
        })))
      .handle("addMembers", ({ params, payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const found = yield* administered(repo, params.id, "add members")
          const added = yield* audit.recorded(
            repo.addMembers(found.workspace.id, payload.user_ids, yield* currentTime),
            (members) =>
              members.map((member) => ({
                action: "member.add",
                target: { type: "member", id: member.user_id },
                workspaceId: found.workspace.id,
                after: member
              }))
          )
          return { added_count: added.length, data: added }
        })))
      .handle("removeMembers", ({ params, payload }) => StoreFailure.answer(removeMembers(repo, audit, params.id, payload.user_ids)))
      .handle("listBudgets", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const found = yield* membership(repo, params.workspace_ref)
          const budgets = yield* repo.budgets(found.workspace.id)
          return { data: budgets.data, include_byok_in_budgets: budgets.includeByok }
        })))
      .handle("getBudget", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const found = yield* membership(repo, params.workspace_ref)
          const budgets = yield* repo.budgets(found.workspace.id)
          const budget = budgets.data.find((b) => (b.reset_interval ?? "lifetime") === params.interval)
          if (budget === undefined) {
            return yield* new NotFound({ message: `Workspace ${found.workspace.slug} has no ${params.interval} budget` })
          }
          return { data: budget, include_byok_in_budgets: budgets.includeByok }
        })))
      .handle("setBudget", ({ params, payload }) => StoreFailure.answer(setBudget(repo, audit, params.workspace_ref, params.interval, payload)))
      .handle("deleteBudget", ({ params }) => StoreFailure.answer(deleteBudget(repo, audit, params.workspace_ref, params.interval)))
  })
)
