import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as ProviderView from "./ProviderView.ts"

export const disable = Command.make(
  "disable",
  { slug: ProviderView.slugArgument, json: SharedFlags.json },
  Effect.fn(function*({ json, slug }) {
    const client = yield* GatewayClient
    const { data } = yield* client.providerAdmin.update({ params: { slug }, payload: { enabled: false } })
    if (json) return yield* Output.json({ data })
    yield* Output.line(`Disabled provider ${slug}: every replica stops routing to it within a second.`)
  }, Connection.withGatewayListing("switchyard providers list"))
).pipe(Command.withDescription("Take a provider out of routing (requests in flight finish)"))
