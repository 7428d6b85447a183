import { GatewayClient } from "@switchyard/client/GatewayClient"
import { type ApiKeyRecord, pageSize } from "@switchyard/core/schema/ApiKey"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as KeyView from "./KeyView.ts"

export const list = Command.make(
  "list",
  {
    includeDisabled: SharedFlags.toggle("include-disabled", "Include disabled keys"),
    offset: Flag.Int("offset").pipe(Flag.withDescription("Show one page of 100 keys from this position (default: every page)"), Flag.optional),
    workspace: Flag.String("workspace").pipe(Flag.withMetavar("ID"), Flag.withDescription("Workspace id (default: your default workspace)"), Flag.optional),
    json: SharedFlags.json
  },
  Effect.fn(function*({ includeDisabled, json, offset, workspace }) {
    const client = yield* GatewayClient
    const page = (at: number) =>
      client.keys.list({
        query: {
          ...(includeDisabled ? { include_disabled: true } : {}),
          ...(at > 0 ? { offset: at } : {}),
          ...(Option.isSome(workspace) ? { workspace_id: workspace.value } : {})
        }
      })
    const data: Array<ApiKeyRecord> = []
    if (Option.isSome(offset)) data.push(...(yield* page(offset.value)).data)
    else {
      for (let at = 0;;) {
        const { data: more } = yield* page(at)
        data.push(...more)
        at += more.length
        if (more.length < pageSize) break
      }
    }
    yield* Output.list(data, { json, columns: KeyView.columns, empty: "No keys." })
  }, Connection.withGateway)
).pipe(
  Command.withDescription("List your API keys in a workspace (needs a management key)"),
  Command.withAlias("ls"),
  Command.withExamples([
    { command: "switchyard keys list", description: "Active keys of your default workspace, as a table" },
    { command: "switchyard keys list --include-disabled --json", description: "Every key, as JSON" }
  ])
)
