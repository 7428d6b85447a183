import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"

export const workspaceFlag = Flag.String("workspace").pipe(
  Flag.withMetavar("ID"),
  Flag.withDescription("Workspace id (default: your default workspace)"),
  Flag.optional
)

export const balance = (data: { readonly total_credits: number; readonly total_usage: number }) =>
  Output.record([
    ["credits", Output.money(data.total_credits)],
    ["usage", Output.money(data.total_usage)],
    ["available", Output.money(data.total_credits - data.total_usage)]
  ])

export const show = Command.make(
  "show",
  { workspace: workspaceFlag, json: SharedFlags.json },
  Effect.fn(function*({ json, workspace }) {
    const client = yield* GatewayClient
    const result = yield* client.credits.get({ query: Option.isSome(workspace) ? { workspace_id: workspace.value } : {} })
    if (json) return yield* Output.json(result)
    yield* balance(result.data)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Show the workspace's credits and usage (USD; needs a management key)"),
  Command.withExamples([{ command: "switchyard credits show", description: "Credits, usage and what is left" }])
)
