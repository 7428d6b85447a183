import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as BatchView from "./BatchView.ts"

export const list = Command.make(
  "list",
  {
    limit: Flag.Int("limit").pipe(Flag.withDescription("How many batches, newest first (default 20)"), Flag.optional),
    workspace: Flag.String("workspace").pipe(
      Flag.withMetavar("ID"),
      Flag.withDescription("The batches of this workspace (a management key: its own; an instance administrator's: any)"),
      Flag.optional
    ),
    allWorkspaces: SharedFlags.toggle("all-workspaces", "Every workspace's batches (an instance administrator's management key)"),
    json: SharedFlags.json
  },
  Effect.fn(function*({ allWorkspaces, json, limit, workspace }) {
    const client = yield* GatewayClient
    // Without either flag: the key's own workspace, whatever key it is.
    const workspaceId = Option.isSome(workspace)
      ? workspace.value
      : allWorkspaces
      ? undefined
      : (yield* client.keys.current()).data.workspace_id
    const page = yield* client.batches.list({
      query: { ...(Option.isSome(limit) ? { limit: limit.value } : {}), ...(workspaceId === undefined ? {} : { workspace_id: workspaceId }) }
    })
    const columns = allWorkspaces ? [...BatchView.columns, BatchView.workspaceColumn] : BatchView.columns
    yield* Output.list(page.data, { json, columns, empty: "No batches." })
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Batches, newest first: the key's workspace's, or with a management key another's or every one's"),
  Command.withExamples([
    { command: "switchyard batch list", description: "The key's workspace's batches" },
    { command: "switchyard batch list --all-workspaces", description: "Every workspace's (an instance administrator's management key)" }
  ]),
  Command.withAlias("ls")
)
