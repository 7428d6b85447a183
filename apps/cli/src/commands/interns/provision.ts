import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as InternView from "./InternView.ts"

export const provision = Command.make(
  "provision",
  { intern: InternView.idArgument, json: SharedFlags.json },
  Effect.fn(function*({ intern, json }) {
    const client = yield* GatewayClient
    const result = yield* client.interns.provision({ params: { internId: yield* InternView.resolveId(intern) } })
    if (json) return yield* Output.json(result)
    yield* Output.line(`Provisioning ${intern}. \`switchyard interns get ${intern}\` shows its progress.`)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Provision an intern, or start a suspended one again"),
  Command.withExamples([{ command: "switchyard interns provision support-bot", description: "Start provisioning" }])
)
