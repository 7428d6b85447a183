import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import { Usage } from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as ProviderView from "./ProviderView.ts"

export const update = Command.make(
  "update",
  {
    slug: ProviderView.slugArgument,
    file: ProviderView.fileFlag.pipe(
      Flag.withDescription("A JSON file of the top-level fields to replace (`endpoints` as a whole)"),
      Flag.optional
    ),
    name: Flag.String("name").pipe(Flag.withDescription("New display name"), Flag.optional),
    // Not `--base-url`: that is the gateway's own address, anywhere on the line.
    upstreamUrl: Flag.String("upstream-url").pipe(Flag.withMetavar("URL"), Flag.withDescription("The provider's new base URL (its `base_url`)"), Flag.optional),
    enable: SharedFlags.toggle("enable", "Turn the provider on"),
    keyFromEnv: ProviderView.keyFromEnvFlag,
    removeKey: SharedFlags.toggle("remove-key", "Remove the stored credential"),
    json: SharedFlags.json
  },
  Effect.fn(function*(input) {
    const client = yield* GatewayClient
    const payload: Record<string, unknown> = {
      ...(Option.isSome(input.file) ? yield* ProviderView.readJson(input.file.value) : {}),
      ...(Option.isSome(input.name) ? { name: input.name.value } : {}),
      ...(Option.isSome(input.upstreamUrl) ? { base_url: input.upstreamUrl.value } : {}),
      ...(input.enable ? { enabled: true } : {}),
      ...(input.removeKey ? { api_key: null } : {}),
      ...(yield* ProviderView.keyFromEnv(input.keyFromEnv))
    }
    if (Object.keys(payload).length === 0) {
      return yield* new Usage({ message: "Nothing to change", hint: "Give --file, --name, --upstream-url, --enable, --key-from-env or --remove-key." })
    }
    const { data } = yield* client.providerAdmin.update({ params: { slug: input.slug }, payload })
    if (input.json) return yield* Output.json({ data })
    yield* ProviderView.detail(data)
  }, Connection.withGatewayListing("switchyard providers list"))
).pipe(
  Command.withDescription("Change a provider created through the API (config-file providers answer 409)"),
  Command.withExamples([
    { command: "switchyard providers update acme --key-from-env ACME_KEY", description: "Rotate the credential" },
    { command: "switchyard providers update acme --enable", description: "Turn a disabled provider back on" },
    { command: "switchyard providers update acme --upstream-url https://api.acme.example/v1", description: "Point it at another upstream address" }
  ])
)
