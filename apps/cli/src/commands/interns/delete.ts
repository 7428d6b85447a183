import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as InternView from "./InternView.ts"

export const del = Command.make(
  "delete",
  {
    intern: InternView.idArgument,
    eraseDisk: SharedFlags.toggle("erase-disk", "Confirm that the intern's disk is erased with it (needed when it has one)"),
    json: SharedFlags.json
  },
  Effect.fn(function*({ eraseDisk, intern, json }) {
    const client = yield* GatewayClient
    const result = yield* client.interns.delete({
      params: { internId: yield* InternView.resolveId(intern) },
      payload: eraseDisk ? { acknowledge_workspace_loss: true } : null
    })
    if (json) return yield* Output.json(result)
    yield* Output.line(`Deleting ${intern}: its runtime${eraseDisk ? " and disk are" : " is"} being removed.`)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Delete an intern"),
  Command.withAlias("rm"),
  Command.withExamples([{ command: "switchyard interns delete support-bot --erase-disk", description: "Delete an intern and erase its disk" }])
)
