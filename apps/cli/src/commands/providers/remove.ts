import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as ProviderView from "./ProviderView.ts"

export const remove = Command.make(
  "rm",
  { slug: ProviderView.slugArgument, json: SharedFlags.json },
  Effect.fn(function*({ json, slug }) {
    const client = yield* GatewayClient
    const result = yield* client.providerAdmin.delete({ params: { slug } })
    if (json) return yield* Output.json({ ...result, slug })
    yield* Output.line(`Deleted provider ${slug} and its stored credential.`)
  }, Connection.withGatewayListing("switchyard providers list"))
).pipe(Command.withDescription("Delete a provider created through the API"), Command.withAlias("delete"))
