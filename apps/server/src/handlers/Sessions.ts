import { Api } from "@switchyard/core/api/Api"
import { Caller, type CallerShape } from "@switchyard/core/api/Authorization"
import { BadRequest, NotFound } from "@switchyard/core/schema/ApiError"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Clock, Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Administrators } from "../auth/Administrators.ts"
import { SingleSignOn } from "../http/SingleSignOn.ts"
import * as StoreFailure from "../http/StoreFailure.ts"
import { AuditLog } from "../store/audit/AuditLog.ts"
import type { Session } from "../store/sessions/SessionStore.ts"
import { SessionStore } from "../store/sessions/SessionStore.ts"
import { reachable } from "./Management.ts"

const wire = (s: Session) => ({
  id: s.id,
  user: { id: s.userId, sub: s.sub, email: s.email, name: s.name },
  created_at: new Date(s.createdAt).toISOString(),
  last_seen_at: new Date(s.lastSeenAt).toISOString(),
  expires_at: new Date(s.expiresAt).toISOString()
})

/**
 * `GET /me` (any credential), and the single sign-on sessions: listed and ended by instance
 * administrators (a management key of `default`, or a person with the instance role admin).
 */
export const SessionsHandlers = HttpApiBuilder.group(
  Api,
  "sessions",
  Effect.fn(function*(handlers) {
    const keys = yield* ApiKeyStore
    const administrators = yield* Administrators
    const store = yield* SessionStore
    const audit = yield* AuditLog
    const sso = yield* SingleSignOn
    const signIn = {
      sso: sso.settings !== undefined,
      key: sso.settings === undefined || sso.settings.sso.key_sign_in
    }
    const workspacesOf = (caller: CallerShape) =>
      Effect.gen(function*() {
        if (caller.kind !== "management") return [{ id: caller.workspaceId, role: "member" as const }]
        const ids = yield* reachable(keys, caller)
        return yield* Effect.forEach(ids, (id) =>
          Effect.map(keys.roleIn(caller.userId, id), (role) => ({ id, role: Option.getOrElse(role, () => "member" as const) })))
      })
    const ended = (sessions: ReadonlyArray<Session>) =>
      sessions.map((s) => ({
        action: "session.delete",
        target: { type: "session", id: s.id },
        workspaceId: null,
        after: { reason: "ended by an administrator", sub: s.sub }
      }))
    return handlers
      .handle("me", () =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* Caller
          const person = caller.person
          const workspaces = yield* workspacesOf(caller)
          if (person !== undefined) {
            return {
              user: { id: caller.userId, sub: person.sub, email: person.email, name: person.name },
              role: person.role,
              workspaces,
              via: "session" as const,
              csrf_token: person.csrfToken,
              sign_in: signIn
            }
          }
          const admin = caller.kind === "management" && (yield* administrators.isAdministrator(caller))
          return {
            user: null,
            role: admin ? "admin" as const : null,
            workspaces,
            via: caller.kind === "management" ? "management_key" as const : "api_key" as const,
            sign_in: signIn
          }
        })))
      .handle("list", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          yield* administrators.require
          const now = yield* Clock.currentTimeMillis
          return { data: (yield* store.list(query.user_id, now)).map(wire) }
        })))
      .handle("revoke", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          yield* administrators.require
          const now = yield* Clock.currentTimeMillis
          const gone = yield* audit.recorded(store.end({ id: params.id }, now), ended)
          if (gone.length === 0) return yield* new NotFound({ message: `No open session ${params.id}` })
          return { deleted: gone.length }
        })))
      .handle("revokeAll", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          yield* administrators.require
          const now = yield* Clock.currentTimeMillis
          if (query.user_id === undefined) {
            return yield* new BadRequest({ message: "DELETE /sessions needs user_id: whose sessions to end", metadata: { field: "user_id" } })
          }
          const gone = yield* audit.recorded(store.end({ userId: query.user_id }, now), ended)
          return { deleted: gone.length }
        })))
  })
)
