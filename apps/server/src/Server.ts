import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Api } from "@switchyard/core/api/Api"
import { Config, Effect, Layer, Option } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"
import * as Bootstrap from "./auth/Bootstrap.ts"
import * as CatalogLoader from "./catalog/CatalogLoader.ts"
import { Broadcast } from "./embeddings/Broadcast.ts"
import { Embeddings } from "./embeddings/Embeddings.ts"
import { EndpointHealth } from "./embeddings/EndpointHealth.ts"
import { Workspaces } from "./embeddings/Workspaces.ts"
import { Adapters } from "./providers/Adapters.ts"
import { ByokHandlers } from "./handlers/Byok.ts"
import { CreditsHandlers } from "./handlers/Credits.ts"
import { EmbeddingsHandlers } from "./handlers/Embeddings.ts"
import { KeysHandlers } from "./handlers/Keys.ts"
import { SystemHandlers } from "./handlers/System.ts"
import * as AuthorizationLive from "./http/AuthorizationLive.ts"
import * as ClientErrors from "./http/ClientErrors.ts"
import * as ConsoleRoute from "./http/ConsoleRoute.ts"
import * as Policies from "./http/Policies.ts"
import * as RateLimit from "./http/RateLimit.ts"
import * as SchemaErrorsLive from "./http/SchemaErrorsLive.ts"
import * as InternsLive from "./interns/InternsLive.ts"
import * as AccountingRepo from "./store/AccountingRepo.ts"
import * as ApiKeyRepo from "./store/ApiKeyRepo.ts"
import * as ByokRepo from "./store/ByokRepo.ts"
import { CredentialCipher } from "./store/CredentialCipher.ts"
import * as Database from "./store/Database.ts"
import { LedgerReports } from "./store/LedgerReports.ts"
import { WorkspaceRepo } from "./store/WorkspaceRepo.ts"
import { ActivityHandlers } from "./handlers/Activity.ts"
import { ProvidersHandlers } from "./handlers/Providers.ts"
import { WorkspacesHandlers } from "./handlers/Workspaces.ts"

export const ServerConfig = Config.all({
  host: Config.String("SWITCHYARD_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.Port("SWITCHYARD_PORT").pipe(Config.withDefault(8080)),
  maxBodyBytes: Config.Int("SWITCHYARD_MAX_BODY_BYTES").pipe(Config.withDefault(8 * 1024 * 1024)),
  // From src/ and from a bundle in dist/ alike, the built console is apps/console/dist.
  consoleDir: ConsoleRoute.ConsoleDirConfig(fileURLToPath(new URL("../../console/dist", import.meta.url)))
})

const Stores = Layer.mergeAll(
  ApiKeyRepo.layer,
  AccountingRepo.layer,
  WorkspaceRepo.layer,
  LedgerReports.layer,
  ByokRepo.layer.pipe(Layer.provide(CredentialCipher.layer))
)

/**
 * The embeddings path: catalog, adapters over one HTTP client, live endpoint health, broadcast.
 */
const EmbeddingsLive = Layer.mergeAll(Embeddings.layer, Broadcast.layer).pipe(
  Layer.provide([Adapters.layer, Workspaces.layer]),
  Layer.provideMerge(EndpointHealth.layer),
  Layer.provideMerge(CatalogLoader.layer),
  Layer.provide(NodeHttpClient.layerUndici)
)

const Handlers = Layer.mergeAll(SystemHandlers, KeysHandlers, CreditsHandlers, ByokHandlers, InternsLive.layer, EmbeddingsHandlers,
  WorkspacesHandlers, ActivityHandlers, ProvidersHandlers).pipe(
  Layer.provide(EmbeddingsLive)
)

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
    Policies.layer({ maxBodyBytes: config.maxBodyBytes }),
    ConsoleRoute.layer(config.consoleDir)
  )
})).pipe(
  Layer.provide(Stores),
  Layer.provide(RateLimit.layer),
  Layer.provide(BootstrapLive),
  Layer.provideMerge(Database.layer)
)

/**
 * The gateway listening on `SWITCHYARD_HOST:SWITCHYARD_PORT`.
 */
export const ServerLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  return HttpRouter.serve(Routes, { disableLogger: true }).pipe(
    Layer.provideMerge(
      NodeHttpServer.layer(() => ClientErrors.install(createServer()), { host: config.host, port: config.port, gracefulShutdownTimeout: "25 seconds" }).pipe(
        // The socket opens only once the store is migrated: a request that arrived before the
        // routes existed would otherwise wait for an answer that never comes.
        Layer.provide(Database.layer)
      )
    )
  )
}))
