import { GatewayClient } from "@switchyard/client/GatewayClient"
import type { WorkspaceBudget } from "@switchyard/core/schema/Workspace"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import { refArgument } from "../workspaces/WorkspaceView.ts"

export const columns: ReadonlyArray<Output.Column<WorkspaceBudget>> = [
  { header: "INTERVAL", value: (b) => b.reset_interval ?? "lifetime" },
  { header: "LIMIT", value: (b) => Output.money(b.limit_usd), align: "right" },
  { header: "UPDATED", value: (b) => Output.date(b.updated_at) }
]

export const list = Command.make(
  "list",
  { workspace: refArgument, json: SharedFlags.json },
  Effect.fn(function*({ json, workspace }) {
    const client = yield* GatewayClient
    const result = yield* client.workspaces.listBudgets({ params: { workspace_ref: workspace } })
    if (json) return yield* Output.json(result)
    yield* Output.table(columns, result.data, "No budgets.")
    yield* Output.note(`BYOK spend ${result.include_byok_in_budgets ? "counts" : "does not count"} toward these budgets.`)
  }, Connection.withGateway)
).pipe(Command.withDescription("A workspace's budgets"), Command.withAlias("ls"))
