import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Argument, Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as BatchView from "./BatchView.ts"

export const batchId = Argument.String("id").pipe(Argument.withDescription("The batch id (batch_…)"))

export const get = Command.make(
  "get",
  { id: batchId, json: SharedFlags.json },
  Effect.fn(function*({ id, json }) {
    const client = yield* GatewayClient
    const batch = yield* client.batches.get({ params: { batch_id: id } })
    if (json) return yield* Output.json(batch)
    yield* BatchView.record(batch)
  }, Connection.withGatewayListing("switchyard batch list"))
).pipe(Command.withDescription("One batch: its status, counts and files"))
