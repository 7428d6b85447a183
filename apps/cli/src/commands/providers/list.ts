import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as ProviderView from "./ProviderView.ts"

export const list = Command.make(
  "list",
  { json: SharedFlags.json },
  Effect.fn(function*({ json }) {
    const client = yield* GatewayClient
    const { data } = yield* client.providers.list()
    yield* Output.list(data, { json, columns: ProviderView.columns, empty: "No providers." })
  }, Connection.withGateway)
).pipe(
  Command.withDescription("List the providers (an instance administrator also sees source, status and credential)"),
  Command.withAlias("ls")
)
