import * as ClientOptions from "@switchyard/client/ClientOptions"
import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect, Layer, Option, Redacted } from "effect"
import { Flag, GlobalFlag } from "effect/cli"
import * as Failure from "./Failure.ts"

export const BaseUrl = GlobalFlag.Setting("base-url")({
  flag: Flag.String("base-url").pipe(
    Flag.withMetavar("URL"),
    Flag.withDescription("Gateway base URL (default: SWITCHYARD_BASE_URL, else http://127.0.0.1:8080/api/v1)"),
    Flag.optional
  )
})

export const ApiKey = GlobalFlag.Setting("api-key")({
  flag: Flag.String("api-key").pipe(
    Flag.withMetavar("KEY"),
    Flag.withDescription("API key sent as the bearer token (default: SWITCHYARD_API_KEY)"),
    Flag.optional
  )
})

const options = Effect.gen(function*() {
  const baseUrl = yield* BaseUrl
  const apiKey = yield* ApiKey
  return {
    ...(Option.isSome(baseUrl) ? { baseUrl: baseUrl.value } : {}),
    ...(Option.isSome(apiKey) ? { apiKey: Redacted.make(apiKey.value) } : {})
  } satisfies ClientOptions.ClientOptions
})

export const resolved = Effect.flatMap(options, ClientOptions.resolve)

const layer = Layer.unwrap(Effect.map(options, (o) => GatewayClient.layerFetch(o)))

const failureContext = resolved.pipe(
  Effect.map(Failure.context),
  Effect.orElseSucceed((): Failure.Context => ({ baseUrl: "(invalid base URL)", hasKey: false }))
)

/** Runs a command against the gateway; a failure is described for the terminal, its 404 hint naming `listCommand` when given. */
const gatewayFor = (listCommand?: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provide(layer),
    Effect.catch((error) =>
      Effect.flatMap(failureContext, (context) =>
        Effect.flatMap(Failure.describe(error, listCommand === undefined ? context : { ...context, listCommand }), Effect.fail))
    )
  )

export const withGateway = gatewayFor()

/** `withGateway` for a command about one kind of thing: a 404's hint names the command that lists them. */
export const withGatewayListing = (listCommand: string) => gatewayFor(listCommand)
