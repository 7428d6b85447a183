import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as BatchView from "./BatchView.ts"

export const list = Command.make(
  "list",
  {
    limit: Flag.Int("limit").pipe(Flag.withDescription("How many batches, newest first (default 20)"), Flag.optional),
    json: SharedFlags.json
  },
  Effect.fn(function*({ json, limit }) {
    const client = yield* GatewayClient
    const page = yield* client.batches.list({ query: Option.isSome(limit) ? { limit: limit.value } : {} })
    yield* Output.list(page.data, { json, columns: BatchView.columns, empty: "No batches." })
  }, Connection.withGateway)
).pipe(Command.withDescription("Your workspace's batches, newest first"), Command.withAlias("ls"))
