import { GatewayClient } from "@switchyard/client/GatewayClient"
import { UpsertBudgetBody } from "@switchyard/core/schema/Workspace"
import { Effect } from "effect"
import { Argument, Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Failure from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import { refArgument } from "../workspaces/WorkspaceView.ts"
import { columns } from "./list.ts"

export const intervalArgument = Argument.Literals("interval", ["daily", "weekly", "monthly", "lifetime"] as const).pipe(
  Argument.withDescription("daily, weekly (Monday to Sunday), monthly (each from midnight UTC) or lifetime")
)

export const set = Command.make(
  "set",
  {
    workspace: refArgument,
    interval: intervalArgument,
    usd: Argument.String("usd").pipe(Argument.withDescription("The limit in USD, such as 25 or 0.5")),
    includeByok: SharedFlags.toggle("include-byok", "Count bring-your-own-key spend toward every budget of the workspace"),
    excludeByok: SharedFlags.toggle("exclude-byok", "Stop counting bring-your-own-key spend"),
    json: SharedFlags.json
  },
  Effect.fn(function*({ excludeByok, includeByok, interval, json, usd, workspace }) {
    if (includeByok && excludeByok) return yield* new Failure.Usage({ message: "--include-byok and --exclude-byok exclude each other" })
    const payload = yield* Failure.validate(UpsertBudgetBody, {
      limit_usd: Number(usd),
      ...(includeByok ? { include_byok_in_budgets: true } : excludeByok ? { include_byok_in_budgets: false } : {})
    })
    const client = yield* GatewayClient
    const result = yield* client.workspaces.setBudget({
      params: { workspace_ref: workspace, interval },
      payload
    })
    if (json) return yield* Output.json(result)
    yield* Output.table(columns, [result.data])
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Set a workspace's budget for an interval (admins only)"),
  Command.withExamples([{ command: "switchyard budgets set team-b monthly 100", description: "Team B may spend $100 a month" }])
)
