import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as WorkspaceView from "./WorkspaceView.ts"

export const del = Command.make(
  "delete",
  {
    workspace: WorkspaceView.refArgument,
    confirmDefault: SharedFlags.toggle("confirm-default", "Confirm deleting your default workspace"),
    json: SharedFlags.json
  },
  Effect.fn(function*({ confirmDefault, json, workspace }) {
    const client = yield* GatewayClient
    const result = yield* client.workspaces.delete({
      params: { id: workspace },
      query: confirmDefault ? { confirm_default_workspace_deletion: true } : {}
    })
    if (json) return yield* Output.json(result)
    yield* Output.line(`Deleted workspace ${workspace}.`)
  }, Connection.withGateway)
).pipe(Command.withDescription("Delete a workspace without keys or interns (admins only)"), Command.withAlias("rm"))
