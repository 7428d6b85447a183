import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as InternView from "./InternView.ts"

export const get = Command.make(
  "get",
  { intern: InternView.idArgument, json: SharedFlags.json },
  Effect.fn(function*({ intern, json }) {
    const client = yield* GatewayClient
    const record = yield* client.interns.get({ params: { internId: yield* InternView.resolveId(intern) } })
    if (json) return yield* Output.json(record)
    yield* InternView.detail(record)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Show one intern"),
  Command.withExamples([{ command: "switchyard interns get support-bot", description: "An intern by name (or give its id)" }])
)
