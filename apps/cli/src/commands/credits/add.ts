import { GatewayClient } from "@switchyard/client/GatewayClient"
import { AddCreditsBody } from "@switchyard/core/schema/Credits"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Failure from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import { balance, workspaceFlag } from "./show.ts"

export const add = Command.make(
  "add",
  {
    amount: Argument.String("usd").pipe(Argument.withDescription("Amount in USD, such as 10 or 0.5")),
    note: Flag.String("note").pipe(Flag.withMetavar("TEXT"), Flag.withDescription("Why the credits were added"), Flag.optional),
    workspace: workspaceFlag,
    json: SharedFlags.json
  },
  Effect.fn(function*({ amount, json, note, workspace }) {
    const payload = yield* Failure.validate(AddCreditsBody, {
      amount,
      ...(Option.isSome(note) ? { note: note.value } : {}),
      ...(Option.isSome(workspace) ? { workspace_id: workspace.value } : {})
    })
    const client = yield* GatewayClient
    const result = yield* client.credits.add({ payload })
    if (json) return yield* Output.json(result)
    yield* balance(result.data)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Add credits to the workspace; the first grant turns its prepaid credits on, so the balance limits spending (needs a management key)"),
  Command.withExamples([{ command: "switchyard credits add 25 --note \"May budget\"", description: "Add $25" }])
)
