import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as InternView from "./InternView.ts"

export const suspend = Command.make(
  "suspend",
  { intern: InternView.idArgument, json: SharedFlags.json },
  Effect.fn(function*({ intern, json }) {
    const client = yield* GatewayClient
    const internId = yield* InternView.resolveId(intern)
    const result = yield* client.interns.suspend({ params: { internId } })
    if (json) return yield* Output.json(result)
    yield* Output.line(`Suspended ${intern}: its runtime is stopped; its disk and settings are kept. \`switchyard interns provision ${intern}\` starts it again.`)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Stop an intern's runtime, keeping its disk and configuration"),
  Command.withExamples([{ command: "switchyard interns suspend support-bot", description: "Suspend an intern by name" }])
)
