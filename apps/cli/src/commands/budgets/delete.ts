import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import { refArgument } from "../workspaces/WorkspaceView.ts"
import { intervalArgument } from "./set.ts"

export const del = Command.make(
  "delete",
  { workspace: refArgument, interval: intervalArgument, json: SharedFlags.json },
  Effect.fn(function*({ interval, json, workspace }) {
    const client = yield* GatewayClient
    const result = yield* client.workspaces.deleteBudget({ params: { workspace_ref: workspace, interval } })
    if (json) return yield* Output.json(result)
    yield* Output.line(`Deleted the ${interval} budget of ${workspace}.`)
  }, Connection.withGateway)
).pipe(Command.withDescription("Remove a workspace's budget for an interval (admins only)"), Command.withAlias("rm"))
