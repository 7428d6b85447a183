import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as WorkspaceView from "./WorkspaceView.ts"

export const get = Command.make(
  "get",
  { workspace: WorkspaceView.refArgument, json: SharedFlags.json },
  Effect.fn(function*({ json, workspace }) {
    const client = yield* GatewayClient
    const result = yield* client.workspaces.get({ params: { id: workspace } })
    if (json) return yield* Output.json(result)
    yield* Output.record(WorkspaceView.pairs(result.data))
  }, Connection.withGateway)
).pipe(Command.withDescription("Show one workspace by id or slug"))
