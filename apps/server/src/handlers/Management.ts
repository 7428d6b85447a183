/**
 * What every management handler shares: the management-key guard, the workspace an operation acts
 * on, and the current time (from Effect's `Clock`).
 */
import { Caller, type CallerShape } from "@switchyard/core/api/Authorization"
import { BadRequest, Forbidden, NotFound } from "@switchyard/core/schema/ApiError"
import type { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Clock, Effect, Option } from "effect"
import * as Access from "../auth/Access.ts"

/**
 * Only a management key may manage keys.
 */
export const requireManagement = Effect.gen(function*() {
  const caller = yield* Caller
  if (caller.kind !== "management") {
    return yield* new Forbidden({ message: "This operation requires a management key" })
  }
  return caller
})

/** Whether the caller is a management key that reaches its own workspace only. */
export const workspaceScoped = (caller: CallerShape): boolean => caller.kind !== "management" || caller.scope === "workspace"

/**
 * Whether the caller reaches `workspaceId`: a member of it, through a key of user scope (decision
 * 0165); its own workspace only, through a key of workspace scope.
 */
const reaches = (keys: ApiKeyStore["Service"], caller: CallerShape, workspaceId: string) =>
  workspaceScoped(caller) ? Effect.succeed(workspaceId === caller.workspaceId) : keys.isMember(caller.userId, workspaceId)

/** Every workspace the caller reaches (see {@link reaches}). */
export const reachable = (keys: ApiKeyStore["Service"], caller: CallerShape) =>
  workspaceScoped(caller) ? Effect.succeed([caller.workspaceId]) : keys.workspacesOf(caller.userId)

/** The caller's default workspace: the one their user chose (key of user scope), else their key's. */
export const defaultWorkspace = (keys: ApiKeyStore["Service"], caller: CallerShape) =>
  workspaceScoped(caller)
    ? Effect.succeed(caller.workspaceId)
    : Effect.map(keys.defaultWorkspaceOf(caller.userId), Option.getOrElse(() => caller.workspaceId))

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu

/**
 * The workspace a management operation acts on: the requested one if the caller reaches it
 * (400 when it is not a UUID, 404 when it does not), else `fallback`.
 */
export const resolveWorkspace = (keys: ApiKeyStore["Service"], requested: string | undefined, fallback: string) =>
  Effect.gen(function*() {
    if (requested === undefined) return fallback
    if (!uuid.test(requested)) {
      return yield* new BadRequest({
        message: "workspace_id must be a workspace id in UUID form",
        metadata: { field: "workspace_id" }
      })
    }
    // Ids are stored in lowercase; a UUID is the same whatever the case of its hex digits.
    const id = requested.toLowerCase()
    const caller = yield* Caller
    if (!(yield* reaches(keys, caller, id))) {
      // A person with no role in the workspace: the role it needs (Access.ts).
      if (caller.person !== undefined) return yield* new Forbidden({ message: Access.noWorkspaceRole(id) })
      return yield* new NotFound({ message: `No workspace ${requested} for this ${workspaceScoped(caller) ? "key" : "user"}` })
    }
    return id
  })

/** The current time, as the `Date` the stores take. */
export const currentTime = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/**
 * The named fields of a record, for an audit entry's `before` and `after` (what a change touched,
 * not the whole record).
 */
export const fieldsOf = (record: object, names: ReadonlyArray<string>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const name of names) if (name in record) out[name] = (record as Record<string, unknown>)[name]
  return out
}
