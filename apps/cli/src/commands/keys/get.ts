import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as KeyView from "./KeyView.ts"

export const get = Command.make(
  "get",
  { hash: KeyView.hashArgument, json: SharedFlags.json },
  Effect.fn(function*({ hash, json }) {
    const client = yield* GatewayClient
    const { data } = yield* client.keys.get({ params: { hash: yield* KeyView.resolveHash(hash) } })
    if (json) return yield* Output.json({ data })
    yield* KeyView.detail(data)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Show one API key"),
  Command.withExamples([
    { command: "switchyard keys get 5247115bd6ab", description: "A key by the start of its hash" }
  ])
)
