import { Api } from "@switchyard/core/api/Api"
import { BadRequest, NotFound } from "@switchyard/core/schema/ApiError"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Administrators } from "../auth/Administrators.ts"
import { AuditIntegrity } from "../observability/AuditWatch.ts"
import * as StoreFailure from "../http/StoreFailure.ts"
import { AuditLog } from "../store/audit/AuditLog.ts"
import { requireManagement } from "./Management.ts"

export const AuditHandlers = HttpApiBuilder.group(
  Api,
  "audit",
  Effect.fn(function*(handlers) {
    const audit = yield* AuditLog
    const administrators = yield* Administrators
    const integrity = yield* AuditIntegrity
    // From the break on an entry cannot be trusted; up to the last check it was found whole;
    // after that it is not checked yet.
    const verified = (id: number): boolean | null => {
      const now = integrity.current()
      if (now.firstBroken !== undefined && id >= now.firstBroken.id) return false
      return id <= now.through ? true : null
    }
    return handlers
      .handle("list", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          const since = query.since === undefined ? undefined : Date.parse(query.since)
          const until = query.until === undefined ? undefined : Date.parse(query.until)
          if (since !== undefined && until !== undefined && until <= since) {
            return yield* new BadRequest({ message: "until must be later than since", metadata: { field: "until" } })
          }
          // An administrator reads every entry; any other management key its own workspace's.
          const everything = yield* administrators.isAdministrator(caller)
          const requested = query.workspace_id?.toLowerCase()
          if (!everything && requested !== undefined && requested !== caller.workspaceId) {
            return yield* new NotFound({ message: `No workspace ${query.workspace_id} for this key` })
          }
          const page = yield* audit.list({
            workspaceId: requested ?? (everything ? undefined : caller.workspaceId),
            action: query.action,
            targetType: query.target_type,
            targetId: query.target_id,
            actor: query.actor,
            since,
            until,
            cursor: query.cursor,
            limit: query.limit ?? 100
          })
          return { data: page.data.map((entry) => ({ ...entry, verified: verified(entry.id) })), next_cursor: page.nextCursor }
        })))
      .handle("verify", () =>
        StoreFailure.answer(Effect.gen(function*() {
          yield* administrators.require
          return yield* audit.verify
        })))
  })
)
