import { NodeHttpServer } from "@effect/platform-node"
import { Api } from "@switchyard/core/api/Api"
import { Config, Effect, Layer, Option } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { createServer } from "node:http"
import * as Bootstrap from "./auth/Bootstrap.ts"
import { KeysHandlers } from "./handlers/Keys.ts"
import { SystemHandlers } from "./handlers/System.ts"
import * as AuthorizationLive from "./http/AuthorizationLive.ts"
import * as Policies from "./http/Policies.ts"
import * as SchemaErrorsLive from "./http/SchemaErrorsLive.ts"
import * as ApiKeyRepo from "./store/ApiKeyRepo.ts"
import * as Database from "./store/Database.ts"

export const ServerConfig = Config.all({
  host: Config.String("SWITCHYARD_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.Port("SWITCHYARD_PORT").pipe(Config.withDefault(8080)),
  maxBodyBytes: Config.Int("SWITCHYARD_MAX_BODY_BYTES").pipe(Config.withDefault(8 * 1024 * 1024))
})

const Stores = ApiKeyRepo.layer

const Handlers = Layer.mergeAll(SystemHandlers, KeysHandlers)

/**
 * Creates the first-start workspace and keys on an empty store and prints them once.
 */
const BootstrapLive = Layer.effectDiscard(
  Bootstrap.bootstrap().pipe(Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: Bootstrap.announce })))
)

/**
 * Every route of the gateway, without a listening socket.
 */
export const Routes = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  return Layer.mergeAll(
    HttpApiBuilder.layer(Api, { openapiPath: "/api/v1/openapi.json" }).pipe(
      Layer.provide(Handlers),
      Layer.provide([AuthorizationLive.layer, SchemaErrorsLive.layer])
    ),
    Policies.layer({ maxBodyBytes: config.maxBodyBytes })
  )
})).pipe(
  Layer.provide(Stores),
  Layer.provide(BootstrapLive),
  Layer.provideMerge(Database.layer)
)

/**
 * The gateway listening on `SWITCHYARD_HOST:SWITCHYARD_PORT`.
 */
export const ServerLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  return HttpRouter.serve(Routes, { disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host: config.host, port: config.port, gracefulShutdownTimeout: "25 seconds" }))
  )
}))
