import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as KeyView from "./KeyView.ts"

export const del = Command.make(
  "delete",
  { hash: KeyView.hashArgument, json: SharedFlags.json },
  Effect.fn(function*({ hash, json }) {
    const client = yield* GatewayClient
    const full = yield* KeyView.resolveHash(hash)
    const result = yield* client.keys.delete({ params: { hash: full } })
    if (json) return yield* Output.json({ ...result, hash: full })
    yield* Output.line(`Deleted key ${KeyView.shortHash(full)}. Requests with its secret now answer 401.`)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Delete an API key for good"),
  Command.withAlias("rm"),
  Command.withExamples([{ command: "switchyard keys delete 815e4b8669f0", description: "Delete a key by the start of its hash" }])
)
