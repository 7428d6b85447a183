import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as KeyView from "./KeyView.ts"

export const current = Command.make(
  "current",
  { json: SharedFlags.json },
  Effect.fn(function*({ json }) {
    const client = yield* GatewayClient
    const { data } = yield* client.keys.current()
    if (json) return yield* Output.json({ data })
    yield* Output.record([
      ...KeyView.pairs(data),
      ["kind", data.is_management_key ? "management" : "standard"],
      ["rate limit", `${data.rate_limit.requests} requests per ${data.rate_limit.interval}`]
    ])
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Show the key you are calling with (any key)"),
  Command.withAlias("whoami")
)
