import { Api } from "@switchyard/core/api/Api"
import { Caller, type CallerShape } from "@switchyard/core/api/Authorization"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import { BadRequest, Forbidden, NotFound, Unauthorized } from "@switchyard/core/schema/ApiError"
import { pageSize } from "@switchyard/core/schema/ApiKey"
import type { CurrentKeyRecord, KeyScope } from "@switchyard/core/schema/ApiKey"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import type { KeyPatch } from "@switchyard/core/store/ApiKeyStore"
import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import * as KeySecret from "../auth/KeySecret.ts"
import { refuseNul } from "../http/NulCharacters.ts"
import { KeyRateLimit } from "../http/RateLimit.ts"
import { AuditLog } from "../store/audit/AuditLog.ts"
import { currentTime, defaultWorkspace, fieldsOf, requireManagement, resolveWorkspace, workspaceScoped } from "./Management.ts"
import * as StoreFailure from "../http/StoreFailure.ts"


const limitNanos = (limit: number | null) => {
  if (limit === null) return Effect.succeed(null)
  const nanos = nanosFromCredits(limit)
  return nanos === undefined || nanos < 0n
    ? Effect.fail(new BadRequest({ message: "limit must be a non-negative amount of credits", metadata: { field: "limit" } }))
    : Effect.succeed(nanos)
}

const futureInstant = (value: string | null, now: Date) => {
  if (value === null) return Effect.succeed(null)
  const at = new Date(value)
  return at.getTime() <= now.getTime()
    ? Effect.fail(new BadRequest({ message: "expires_at must be in the future", metadata: { field: "expires_at" } }))
    : Effect.succeed(at)
}

const noKey = (hash: string) => new NotFound({ message: `No API key with hash ${hash.slice(0, 64)}` })

/**
 * Refuses a key the caller may not create: a management key, or a key for another member, only by
 * an admin of the workspace, for a member of it; no external `api_key`.
 */
const mayCreate = (
  keys: ApiKeyStore["Service"],
  callerId: string,
  workspaceId: string,
  owner: string,
  kind: string,
  externalKey: unknown
) =>
  Effect.gen(function*() {
    if (owner !== callerId || kind === "management") {
      const role = yield* keys.roleIn(callerId, workspaceId)
      if (Option.getOrUndefined(role) !== "admin") {
        return yield* new Forbidden({
          message: "Only an admin of the workspace may create management keys or keys for other members"
        })
      }
      if (owner !== callerId && !(yield* keys.isMember(owner, workspaceId))) {
        return yield* new BadRequest({
          message: "creator_user_id must be a member of the workspace the key is created in",
          metadata: { field: "creator_user_id" }
        })
      }
    }
    if (externalKey !== undefined) {
      return yield* new BadRequest({ message: "external.api_key is not supported", metadata: { field: "external.api_key" } })
    }
  })

/**
 * What the new key reaches: a management key of workspace scope mints only keys of that scope
 * (one of user scope would reach beyond its own workspace); scope is for management keys.
 */
const scopeOf = (caller: CallerShape, kind: "standard" | "management", asked: KeyScope | undefined) =>
  Effect.gen(function*() {
    if (kind === "standard") {
      if (asked === "user") {
        return yield* new BadRequest({ message: "A standard key reaches its own workspace only: scope is for management keys", metadata: { field: "scope" } })
      }
      return undefined
    }
    const scope = asked ?? (workspaceScoped(caller) ? "workspace" : "user")
    if (scope === "user" && workspaceScoped(caller)) {
      return yield* new Forbidden({
        message: "A management key of workspace scope may create management keys of workspace scope only",
        metadata: { field: "scope" }
      })
    }
    return scope
  })

/** The key by hash, as the caller reaches it (only its own workspace's with a key of workspace scope). */
const ownKey = (caller: CallerShape, hash: string, now: Date) => ({
  userId: caller.userId,
  ...(workspaceScoped(caller) ? { workspaceId: caller.workspaceId } : {}),
  hash,
  now
})

export const KeysHandlers = HttpApiBuilder.group(
  Api,
  "keys",
  Effect.fn(function*(handlers) {
    const keys = yield* ApiKeyStore
    const rateLimit = yield* KeyRateLimit
    const audit = yield* AuditLog
    return handlers
      .handle("list", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          const workspaceId = yield* resolveWorkspace(keys, query.workspace_id, yield* defaultWorkspace(keys, caller))
          // An admin of the workspace lists every member's keys in it; a member their own.
          const role = yield* keys.roleIn(caller.userId, workspaceId)
          const data = yield* keys.list({
            userId: Option.getOrUndefined(role) === "admin" ? null : caller.userId,
            workspaceId,
            includeDisabled: query.include_disabled ?? false,
            offset: query.offset ?? 0,
            limit: pageSize,
            now: yield* currentTime
          })
          return { data }
        })))
      .handle("create", ({ payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          yield* refuseNul(payload)
          const now = yield* currentTime
          const workspaceId = yield* resolveWorkspace(keys, payload.workspace_id, yield* defaultWorkspace(keys, caller))
          const owner = payload.creator_user_id ?? caller.userId
          const kind = payload.kind ?? "standard"
          const scope = yield* Effect.andThen(mayCreate(keys, caller.userId, workspaceId, owner, kind, payload.external?.api_key), scopeOf(caller, kind, payload.scope))
          const secret = KeySecret.generate()
          const data = yield* audit.recorded(keys.create({
            kind,
            ...(scope === undefined ? {} : { scope }),
            userId: owner,
            workspaceId,
            hash: KeySecret.hash(secret),
            label: KeySecret.label(secret),
            name: payload.name,
            limitNanos: yield* limitNanos(payload.limit ?? null),
            limitReset: payload.limit_reset ?? null,
            includeByokInLimit: payload.include_byok_in_limit ?? false,
            expiresAt: yield* futureInstant(payload.expires_at ?? null, now),
            externalUser: payload.external?.user ?? null,
            now
          }), (created) => ({
            action: "key.create",
            target: { type: "key", id: created.hash },
            workspaceId,
            after: { ...created, kind }
          }))
          return { data, key: secret }
        })))
      .handle("get", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          const found = yield* keys.get(ownKey(caller, params.hash, yield* currentTime))
          if (Option.isNone(found)) return yield* noKey(params.hash)
          return { data: found.value }
        })))
      .handle("update", ({ params, payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          yield* refuseNul(payload)
          const now = yield* currentTime
          if (payload.disabled === true && params.hash === caller.keyHash) {
            return yield* new BadRequest({ message: "A key cannot disable itself", metadata: { field: "disabled" } })
          }
          const patch: KeyPatch = {
            ...(payload.name !== undefined ? { name: payload.name } : {}),
            ...(payload.disabled !== undefined ? { disabled: payload.disabled } : {}),
            ...(payload.limit !== undefined ? { limitNanos: yield* limitNanos(payload.limit) } : {}),
            ...(payload.limit_reset !== undefined ? { limitReset: payload.limit_reset } : {}),
            ...(payload.include_byok_in_limit !== undefined ? { includeByokInLimit: payload.include_byok_in_limit } : {}),
            ...(payload.expires_at !== undefined ? { expiresAt: yield* futureInstant(payload.expires_at, now) } : {})
          }
          const changed = Object.keys(payload)
          const updated = yield* audit.recorded(
            Effect.gen(function*() {
              const before = yield* keys.get(ownKey(caller, params.hash, now))
              const after = yield* keys.update({ ...ownKey(caller, params.hash, now), patch })
              return Option.all({ before, after })
            }),
            Option.match({
              onNone: () => undefined,
              onSome: ({ after, before }) => ({
                action: "key.update",
                target: { type: "key", id: after.hash },
                workspaceId: after.workspace_id,
                before: fieldsOf(before, changed),
                after: fieldsOf(after, changed)
              })
            })
          )
          if (Option.isNone(updated)) return yield* noKey(params.hash)
          return { data: updated.value.after }
        })))
      .handle("delete", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          if (params.hash === caller.keyHash) {
            return yield* new BadRequest({ message: "A key cannot delete itself" })
          }
          const now = yield* currentTime
          const removed = yield* audit.recorded(
            Effect.gen(function*() {
              const before = yield* keys.get(ownKey(caller, params.hash, now))
              const gone = yield* keys.remove(ownKey(caller, params.hash, now))
              return gone ? before : Option.none()
            }),
            Option.match({
              onNone: () => undefined,
              onSome: (before) => ({
                action: "key.delete",
                target: { type: "key", id: before.hash },
                workspaceId: before.workspace_id,
                before
              })
            })
          )
          if (Option.isNone(removed)) return yield* noKey(params.hash)
          return { deleted: true as const }
        })))
      .handle("current", () =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* Caller
          const found = yield* keys.current(caller.keyId, yield* currentTime)
          // Deleted through another replica a moment ago, before this one heard of it.
          if (Option.isNone(found)) return yield* new Unauthorized({ message: "This API key no longer exists" })
          const { kind, record, zeroCostRequestsToday } = found.value
          const data: CurrentKeyRecord = {
            ...record,
            allowed_data_regions: [],
            free_model_daily_requests: { limit: -1, remaining: -1, used: zeroCostRequestsToday },
            is_free_tier: false,
            is_management_key: kind === "management",
            is_provisioning_key: kind === "management",
            organization_id: null,
            rate_limit: Option.match(rateLimit.policy, {
              onNone: () => ({ requests: -1, interval: "none", note: "Switchyard does not rate-limit this key (SWITCHYARD_RATE_LIMIT=off)" }),
              onSome: (p) => ({
                requests: p.requests,
                interval: p.interval,
                note: "Per key, token bucket: the allowance refills continuously over the interval"
              })
            })
          }
          return { data }
        })))
  })
)
