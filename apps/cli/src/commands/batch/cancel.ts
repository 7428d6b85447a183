import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as BatchView from "./BatchView.ts"
import { batchId } from "./get.ts"

export const cancel = Command.make(
  "cancel",
  { id: batchId, json: SharedFlags.json },
  Effect.fn(function*({ id, json }) {
    const client = yield* GatewayClient
    const batch = yield* client.batches.cancel({ params: { batch_id: id } })
    if (json) return yield* Output.json(batch)
    yield* BatchView.record(batch)
  }, Connection.withGatewayListing("switchyard batch list"))
).pipe(Command.withDescription("Stop a batch: lines already served stay in its output (and charged), the rest are not run"))
