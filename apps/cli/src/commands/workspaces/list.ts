import { GatewayClient } from "@switchyard/client/GatewayClient"
import type { WorkspaceRecord } from "@switchyard/core/schema/Workspace"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as WorkspaceView from "./WorkspaceView.ts"

export const list = Command.make(
  "list",
  { json: SharedFlags.json },
  Effect.fn(function*({ json }) {
    const client = yield* GatewayClient
    const data: Array<WorkspaceRecord> = []
    for (let offset = 0;;) {
      const page = yield* client.workspaces.list({ query: { offset, limit: 100 } })
      data.push(...page.data)
      offset += page.data.length
      if (page.data.length === 0 || offset >= page.total_count) break
    }
    yield* Output.list(data, { json, columns: WorkspaceView.columns, empty: "No workspaces." })
  }, Connection.withGateway)
).pipe(
  Command.withDescription("List the workspaces you belong to (needs a management key)"),
  Command.withAlias("ls")
)
