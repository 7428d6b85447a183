import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as ProviderView from "./ProviderView.ts"

export const add = Command.make(
  "add",
  { file: ProviderView.fileFlag, keyFromEnv: ProviderView.keyFromEnvFlag, json: SharedFlags.json },
  Effect.fn(function*({ file, json, keyFromEnv }) {
    const client = yield* GatewayClient
    const payload = { ...(yield* ProviderView.readJson(file)), ...(yield* ProviderView.keyFromEnv(keyFromEnv)) }
    const { data } = yield* client.providerAdmin.create({ payload })
    if (json) return yield* Output.json({ data })
    yield* ProviderView.detail(data)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Add a provider at runtime, live on every replica within a second (instance administrators)"),
  Command.withExamples([
    { command: "switchyard providers add --file acme.json --key-from-env ACME_KEY", description: "Add the provider in acme.json with the credential in $ACME_KEY" }
  ])
)
