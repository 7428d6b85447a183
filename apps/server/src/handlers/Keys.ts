import { Api } from "@switchyard/core/api/Api"
import { Caller } from "@switchyard/core/api/Authorization"
import { BadRequest, Forbidden, NotFound } from "@switchyard/core/errors/ApiError"
import { pageSize } from "@switchyard/core/schema/ApiKey"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Clock, Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu

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

export const KeysHandlers = HttpApiBuilder.group(
  Api,
  "keys",
  Effect.fn(function*(handlers) {
    const keys = yield* ApiKeyStore
    return handlers.handle("list", ({ query }) =>
      Effect.gen(function*() {
        const caller = yield* requireManagement
        const workspaceId = query.workspace_id ?? Option.getOrElse(yield* keys.defaultWorkspaceOf(caller.userId), () => caller.workspaceId)
        if (!uuid.test(workspaceId)) {
          return yield* new BadRequest({
            message: "workspace_id must be a workspace id in UUID form",
            metadata: { field: "workspace_id" }
          })
        }
        if (!(yield* keys.isMember(caller.userId, workspaceId))) {
          return yield* new NotFound({ message: `No workspace ${workspaceId} for this user` })
        }
        const now = new Date(yield* Clock.currentTimeMillis)
        const data = yield* keys.list({
          userId: caller.userId,
          workspaceId,
          includeDisabled: query.include_disabled ?? false,
          offset: query.offset ?? 0,
          limit: pageSize,
          now
        })
        return { data }
      })
    )
  })
)
