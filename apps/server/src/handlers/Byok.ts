import { inProcess } from "@switchyard/core/adapters/Registry"
import { Api } from "@switchyard/core/api/Api"
import { BadRequest, NotFound } from "@switchyard/core/schema/ApiError"
import { unsupportedFields } from "@switchyard/core/schema/Byok"
import type { ByokKey, CreateByokBody, UpdateByokBody } from "@switchyard/core/schema/Byok"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import { Effect, Option, Redacted } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { refuseNul } from "../http/NulCharacters.ts"
import { AuditLog } from "../store/audit/AuditLog.ts"
import { currentTime, fieldsOf, reachable, requireManagement, resolveWorkspace } from "./Management.ts"
import * as StoreFailure from "../http/StoreFailure.ts"

const refuseUnsupported = (body: CreateByokBody | UpdateByokBody) => {
  const nul = refuseNul(body)
  const set = unsupportedFields.filter((field) => {
    const value = body[field]
    return value !== undefined && value !== null && value !== false
  })
  return set.length === 0
    ? nul
    : Effect.fail(new BadRequest({
      message: `Switchyard does not support ${set.join(", ")} on BYOK credentials; leave ${set.length === 1 ? "it" : "them"} unset, null or false`,
      metadata: { fields: set }
    }))
}


const noCredential = (id: string) => new NotFound({ message: `No BYOK credential ${id.slice(0, 100)}` })

export const ByokHandlers = HttpApiBuilder.group(
  Api,
  "byok",
  Effect.fn(function*(handlers) {
    const store = yield* ByokStore
    const keys = yield* ApiKeyStore
    const audit = yield* AuditLog
    const loaded = yield* CurrentCatalog
    // A credential for a catalog provider the gateway has no credential of its own for turns that
    // provider on for the workspace's routing: said in the answer and in the log, never silently.
    // The catalog is read at each call (providers managed at runtime change it).
    const activation = (credential: ByokKey) =>
      Effect.gen(function*() {
        const provider = loaded.catalog.providers.find((p) => p.slug === credential.provider)
        const activates = !credential.disabled && provider !== undefined && !inProcess(provider.adapter) &&
          !loaded.active.has(credential.provider)
        if (activates) {
          yield* Effect.logInfo("BYOK credential activates a provider for the workspace's routing").pipe(Effect.annotateLogs({
            provider: credential.provider,
            workspace: credential.workspace_id ?? "",
            credential: credential.id
          }))
        }
        return { ...credential, activates_provider: activates }
      })
    const visible = Effect.gen(function*() {
      const caller = yield* requireManagement
      return yield* reachable(keys, caller)
    })
    return handlers
      .handle("list", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          const workspaceId = yield* resolveWorkspace(keys, query.workspace_id, caller.workspaceId)
          const page = yield* store.list({
            workspaceIds: [workspaceId],
            provider: query.provider,
            offset: query.offset ?? 0,
            limit: query.limit ?? 50
          })
          return { data: page.data, total_count: page.total }
        })))
      .handle("create", ({ payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          yield* refuseUnsupported(payload)
          const workspaceId = yield* resolveWorkspace(keys, payload.workspace_id, caller.workspaceId)
          const data = yield* audit.recorded(store.create({
            workspaceId,
            provider: payload.provider,
            secret: Redacted.make(payload.key),
            name: payload.name ?? null,
            disabled: payload.disabled ?? false,
            now: yield* currentTime
          }), (created) => ({ action: "byok.create", target: { type: "byok", id: created.id }, workspaceId, after: created }))
          return { data: yield* activation(data) }
        })))
      .handle("get", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const found = yield* store.get(params.id, yield* visible)
          if (Option.isNone(found)) return yield* noCredential(params.id)
          return { data: found.value }
        })))
      .handle("update", ({ params, payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const workspaceIds = yield* visible
          yield* refuseUnsupported(payload)
          const now = yield* currentTime
          // The secret itself is never recorded: its label (first and last characters) says it changed.
          const changed = Object.keys(payload).map((field) => (field === "key" ? "label" : field))
          const updated = yield* audit.recorded(
            Effect.gen(function*() {
              const before = yield* store.get(params.id, workspaceIds)
              const after = yield* store.update(params.id, workspaceIds, {
                ...(payload.key !== undefined ? { secret: Redacted.make(payload.key) } : {}),
                ...(payload.name !== undefined ? { name: payload.name } : {}),
                ...(payload.disabled !== undefined ? { disabled: payload.disabled } : {}),
                now
              })
              return Option.all({ before, after })
            }),
            Option.match({
              onNone: () => undefined,
              onSome: ({ after, before }) => ({
                action: "byok.update",
                target: { type: "byok", id: after.id },
                workspaceId: after.workspace_id,
                before: fieldsOf(before, changed),
                after: fieldsOf(after, changed)
              })
            })
          )
          if (Option.isNone(updated)) return yield* noCredential(params.id)
          return { data: yield* activation(updated.value.after) }
        })))
      .handle("delete", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const workspaceIds = yield* visible
          const removed = yield* audit.recorded(
            Effect.gen(function*() {
              const before = yield* store.get(params.id, workspaceIds)
              return (yield* store.remove(params.id, workspaceIds)) ? before : Option.none()
            }),
            Option.match({
              onNone: () => undefined,
              onSome: (before) => ({ action: "byok.delete", target: { type: "byok", id: before.id }, workspaceId: before.workspace_id, before })
            })
          )
          if (Option.isNone(removed)) return yield* noCredential(params.id)
          return { deleted: true as const }
        })))
  })
)
