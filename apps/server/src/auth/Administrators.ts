import { Caller, type CallerShape } from "@switchyard/core/api/Authorization"
import { Forbidden } from "@switchyard/core/schema/ApiError"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Context, Effect, Layer } from "effect"
import * as WorkspaceStatements from "../store/keys/WorkspaceStatements.ts"

/**
 * Instance administrators: the management keys of the workspace `default` (the one first start
 * creates) of user scope (one of workspace scope reaches that workspace only). An administrator grants it by adding a user to `default` and creating a management key
 * for them there (`POST /keys` with `workspace_id`, `creator_user_id` and `kind: "management"`,
 * which only an admin of `default` may do); deleting that key takes it back.
 */
export class Administrators extends Context.Service<Administrators, {
  readonly isAdministrator: (caller: CallerShape) => Effect.Effect<boolean, StoreUnavailable>
  /** The caller, when an instance administrator; 403 otherwise. */
  readonly require: Effect.Effect<CallerShape, Forbidden | StoreUnavailable, Caller>
}>()("@switchyard/server/auth/Administrators") {
  static readonly layer = Layer.effect(
    Administrators,
    Effect.gen(function*() {
      const workspaces = yield* WorkspaceStatements.make
      // A management key of workspace scope reaches its own workspace only, never the instance.
      // A person: an instance admin, or a viewer (whose calls the edge limits to reads, Access.ts).
      const isAdministrator = (caller: CallerShape) =>
        caller.person !== undefined
          ? Effect.succeed(caller.person.role === "admin" || caller.person.role === "viewer")
          : caller.kind !== "management" || caller.scope === "workspace" ? Effect.succeed(false) : workspaces.isDefault(caller.workspaceId)
      const require = Effect.gen(function*() {
        const caller = yield* Caller
        if (!(yield* isAdministrator(caller))) {
          return yield* new Forbidden({
            message: "This operation requires an instance administrator: a management key of the workspace `default`"
          })
        }
        return caller
      })
      return Administrators.of({ isAdministrator, require })
    })
  )
}
