import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Api } from "@switchyard/core/api/Api"
import { Config, Effect, Layer, Option, Schema } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"
import * as Bootstrap from "./auth/Bootstrap.ts"
import { EmbeddingCache } from "./cache/EmbeddingCache.ts"
import { Discovered } from "./catalog/Discovered.ts"
import * as Discovery from "./catalog/Discovery.ts"
import * as LiveCatalog from "./catalog/LiveCatalog.ts"
import { Broadcast } from "./embeddings/Broadcast.ts"
import { Embeddings } from "./embeddings/Embeddings.ts"
import { EndpointHealth } from "./pipeline/EndpointHealth.ts"
import { Workspaces } from "./pipeline/Workspaces.ts"
import { Adapters } from "./providers/Adapters.ts"
import { HealthProbes } from "./pipeline/HealthProbes.ts"
import { Replicas } from "./providers/Replicas.ts"
import * as UpstreamHttp from "./providers/UpstreamHttp.ts"
import { ByokHandlers } from "./handlers/Byok.ts"
import { CreditsHandlers } from "./handlers/Credits.ts"
import { EmbeddingsHandlers } from "./handlers/Embeddings.ts"
import { CohereHandlers } from "./handlers/Cohere.ts"
import { RerankHandlers } from "./handlers/Rerank.ts"
import { Rerank } from "./rerank/Rerank.ts"
import { KeysHandlers } from "./handlers/Keys.ts"
import { ModelsHandlers } from "./handlers/Models.ts"
import { SystemHandlers } from "./handlers/System.ts"
import * as AuthorizationLive from "./http/AuthorizationLive.ts"
import * as ClientErrors from "./http/ClientErrors.ts"
import * as ConsoleRoute from "./http/ConsoleRoute.ts"
import * as Drain from "./http/Drain.ts"
import * as Liveness from "./http/Liveness.ts"
import { MemoryBudget } from "./http/MemoryBudget.ts"
import * as Policies from "./http/Policies.ts"
import * as RateLimit from "./http/RateLimit.ts"
import * as RequestBody from "./http/RequestBody.ts"
import * as SchemaErrorsLive from "./http/SchemaErrorsLive.ts"
import { ServedRequests } from "./http/ServedRequests.ts"
import { InternPolicyLive, InternsHandlers, RegionalHostsLive } from "./handlers/Interns.ts"
import * as InternControl from "./interns/InternControl.ts"
import * as InternRuntimeLive from "./interns/InternRuntimeLive.ts"
import * as Reconcile from "./interns/Reconcile.ts"
import * as InternStoreLive from "./store/interns/InternStoreLive.ts"
import * as AccessLog from "./observability/AccessLog.ts"
import * as AuditWatch from "./observability/AuditWatch.ts"
import * as MethodNotAllowed from "./http/MethodNotAllowed.ts"
import { GatewayMetrics } from "./observability/GatewayMetrics.ts"
import { RecentFailures } from "./observability/RecentFailures.ts"
import * as MetricsEndpoint from "./observability/MetricsEndpoint.ts"
import * as ShutdownLog from "./observability/ShutdownLog.ts"
import * as StartupReport from "./StartupReport.ts"
import * as AccountingLive from "./store/money/AccountingLive.ts"
import * as ApiKeyStoreLive from "./store/keys/ApiKeyStoreLive.ts"
import * as ByokStoreLive from "./store/credentials/ByokStoreLive.ts"
import { CredentialCipher } from "./store/credentials/CredentialCipher.ts"
import * as Database from "./store/database/Database.ts"
import { LedgerReports } from "./store/money/LedgerReports.ts"
import { LedgerRetention } from "./store/money/LedgerRetention.ts"
import * as StoreUpkeep from "./store/sqlite/StoreUpkeep.ts"
import { WorkspaceRepo } from "./store/keys/WorkspaceRepo.ts"
import { ActivityHandlers } from "./handlers/Activity.ts"
import { AuditHandlers } from "./handlers/Audit.ts"
import { ProviderAdminHandlers } from "./handlers/ProviderAdmin.ts"
import { ProviderRepo } from "./store/credentials/ProviderRepo.ts"
import { Administrators } from "./auth/Administrators.ts"
import { AuditLog } from "./store/audit/AuditLog.ts"
import * as RequestHost from "./http/RequestHost.ts"
import { ProvidersHandlers } from "./handlers/Providers.ts"
import { WorkspacesHandlers } from "./handlers/Workspaces.ts"
import { BatchesHandlers } from "./handlers/Batches.ts"
import { FilesHandlers } from "./handlers/Files.ts"
import { BatchStore } from "./store/batches/BatchStore.ts"
import * as BatchRunner from "./batches/BatchRunner.ts"
import { LineRunner } from "./batches/LineRunner.ts"
import { ProviderBatches } from "./batches/ProviderBatches.ts"
import { ProviderBatchStore } from "./store/batches/ProviderBatchStore.ts"
import * as StartupHeap from "./StartupHeap.ts"
import { SessionsHandlers } from "./handlers/Sessions.ts"
import * as SignInRoutes from "./http/SignInRoutes.ts"
import { SingleSignOn } from "./http/SingleSignOn.ts"
import { SessionStore } from "./store/sessions/SessionStore.ts"
import * as Workers from "./Workers.ts"

const ServerConfig = Config.all({
  host: Config.String("SWITCHYARD_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.Port("SWITCHYARD_PORT").pipe(Config.withDefault(8080)),
  maxBodyBytes: Config.Int("SWITCHYARD_MAX_BODY_BYTES").pipe(Config.withDefault(8 * 1024 * 1024)),
  drainGraceMillis: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 600_000 })), "SWITCHYARD_DRAIN_GRACE_MS").pipe(
    Config.withDefault(Drain.defaultGraceMillis)
  ),
  // From src/ and from a bundle in dist/ alike, the built console is apps/console/dist.
  consoleDir: ConsoleRoute.ConsoleDirConfig(fileURLToPath(new URL("../../console/dist", import.meta.url)))
})

const Stores = Layer.mergeAll(
  ApiKeyStoreLive.layer,
  AccountingLive.layer,
  WorkspaceRepo.layer,
  LedgerReports.layer,
  // One process of the gateway keeps the store (`SWITCHYARD_WORKERS`: worker 1).
  Workers.upkeepHere() ? StoreUpkeep.layer : Layer.empty,
  Layer.unwrap(Effect.map(RequestHost.TrustProxyConfig, (trustProxy) => AuditLog.layer({ trustProxy }))),
  Administrators.layer,
  ByokStoreLive.layer,
  ProviderRepo.layer,
  BatchStore.layer,
  ProviderBatchStore.layer,
  SessionStore.layer
).pipe(Layer.provide(CredentialCipher.layer))

/**
 * The model paths (embeddings and rerank): catalog, adapters over one HTTP client, live endpoint
 * health, the embeddings cache, broadcast.
 */
const EmbeddingsLive = Layer.mergeAll(Embeddings.layer, Rerank.layer, Broadcast.layer, HealthProbes.layer, Discovery.layer).pipe(
  Layer.provide(EmbeddingCache.layer),
  // The same budget as the request policies' (one layer, built once): a model call is charged its answer.
  Layer.provide(MemoryBudget.layer),
  // The providers' test action calls the adapters too.
  Layer.provideMerge(Adapters.layer),
  // Each self-hosted server's replicas: their load and health, read by the providers' answers.
  Layer.provideMerge(Replicas.layer),
  // The workspace handlers drop a workspace's kept settings when they change them.
  Layer.provideMerge(Workspaces.layer),
  Layer.provideMerge(EndpointHealth.layer),
  // The built-in catalog and the config file, with the providers managed at runtime over them.
  Layer.provideMerge(LiveCatalog.layer),
  // What the discovering self-hosted providers' servers serve (Discovery.ts), read by each rebuild.
  Layer.provideMerge(Discovered.layer),
  Layer.provide(UpstreamHttp.clientLayer)
)

/**
 * The interns: their handlers and request policy, the control plane, the runtime driver, the
 * store, and the start-up reconciliation.
 */
const InternsLive = Layer.mergeAll(InternsHandlers.pipe(Layer.provide([InternPolicyLive, RegionalHostsLive])), Reconcile.layer()).pipe(
  Layer.provideMerge(InternControl.InternControl.layer),
  Layer.provide(InternRuntimeLive.layer),
  Layer.provideMerge(InternStoreLive.layer)
)

const Handlers = Layer.mergeAll(SystemHandlers, KeysHandlers, CreditsHandlers, ByokHandlers, InternsLive, EmbeddingsHandlers, RerankHandlers, CohereHandlers, ModelsHandlers,
  WorkspacesHandlers, ActivityHandlers, ProvidersHandlers, ProviderAdminHandlers, AuditHandlers, FilesHandlers, BatchesHandlers,
  SessionsHandlers).pipe(
  Layer.provide(EmbeddingsLive),
  // The audit chain's check in the background: health and the audit listing read what it found.
  Layer.provide(AuditWatch.AuditIntegrity.layer)
)

/**
 * The batches' background work (BatchRunner.ts): each line through the same model path, or through
 * its provider's batch API where that is cheaper (ProviderBatches.ts).
 */
const BatchesLive = BatchRunner.layer.pipe(
  Layer.provide(ProviderBatches.layer),
  Layer.provide(LineRunner.layer),
  Layer.provide(EmbeddingsLive),
  Layer.provide(UpstreamHttp.clientLayer)
)

/**
 * Creates the first-start workspace and keys on an empty store and prints them once.
 */
const BootstrapLive = Layer.effectDiscard(
  Bootstrap.bootstrap().pipe(Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: Bootstrap.announce })))
)

/**
 * Every route of the gateway, on a migrated store, before the first-start keys exist.
 */
const App = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  return Layer.mergeAll(
    HttpApiBuilder.layer(Api, { openapiPath: "/api/v1/openapi.json" }).pipe(
      Layer.provide(Handlers),
      Layer.provide([
        AuthorizationLive.layer.pipe(Layer.provide(RequestBody.RequestBodies.layer({ maxBodyBytes: config.maxBodyBytes }))),
        SchemaErrorsLive.layer
      ])
    ),
    MetricsEndpoint.layer,
    Liveness.layer,
    BatchesLive,
    ConsoleRoute.layer(config.consoleDir),
    SignInRoutes.layer,
    MethodNotAllowed.layer,
    // The access log goes in first, so it wraps the policies and sees their refusals too.
    Policies.layer.pipe(Layer.provide(AccessLog.layer))
  )
})).pipe(
  Layer.provide([GatewayMetrics.layer, RecentFailures.layer]),
  // Single sign-on: the sign-in routes, the session cookie at the key check, `/me` and `/sessions`.
  Layer.provide(SingleSignOn.layer),
  Layer.provide(Stores),
  // Out of the layer too: the ledger's pruning runs in the background, and tests run it on their clock.
  Layer.provideMerge(LedgerRetention.layer),
  Layer.provide(RateLimit.KeyRateLimit.layer),
  Layer.provideMerge(Database.layer)
)

/**
 * Every route of the gateway, without a listening socket, with the first-start keys made.
 */
export const Routes = BootstrapLive.pipe(Layer.provideMerge(App))

/**
 * The gateway listening on `SWITCHYARD_HOST:SWITCHYARD_PORT`. The socket opens only once every
 * route is built (store migrated, catalog loaded, stores ready): a connection accepted earlier
 * would wait for an answer that nothing could give yet. The first-start keys are made (and their
 * secrets printed) only once the socket is open, so that a start that fails (a busy port, a bad
 * setting) never leaves keys behind whose secrets were shown by a process that then exited;
 * requests taken meanwhile wait for them. Then it says what it runs with (StartupReport.ts).
 */
export const ServerLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  // On SIGTERM the server drains (Drain.ts): readiness fails, the socket stops accepting, answers
  // close their connections, idle ones are left to close by themselves within the grace.
  const connections = Layer.effect(Drain.DrainConnections, Effect.map(ServedRequests, Drain.make))
  const listening = Layer.unwrap(Effect.gen(function*() {
    const drained = yield* Drain.DrainConnections
    return NodeHttpServer.layerServer(() => Drain.install(ClientErrors.install(createServer()), drained), {
      host: config.host,
      port: config.port,
      gracefulShutdownTimeout: "25 seconds"
    })
  }))
  const serve = Layer.unwrap(Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const served = yield* ServedRequests
    return HttpServer.serve(served.serve(router.asHttpEffect())).pipe(Layer.provideMerge(listening))
  }))
  // Released before the server closes (layers are released in reverse): on a drain, the server
  // keeps its connections until they closed by themselves or the grace is over, so a request
  // already sent on a kept-alive connection is answered (with `Connection: close`), never reset.
  const Linger = Layer.effectDiscard(Effect.gen(function*() {
    const drained = yield* Drain.DrainConnections
    // The runtime's own signal listener (which starts this release) runs before the one that
    // marks the drain (ShutdownLog.ts), in the same turn: the drain is read after a yield.
    yield* Effect.addFinalizer(() =>
      Effect.yieldNow.pipe(
        Effect.andThen(Effect.suspend(() => (drained.draining() ? Drain.windDown(drained, config.drainGraceMillis) : Effect.void)))
      )
    )
  }))
  // Requests taken meanwhile wait for the first-start keys (ServedRequests.ts).
  const Ready = Layer.effectDiscard(Effect.gen(function*() {
    yield* (yield* ServedRequests).ready
    StartupHeap.letV8Shrink()
  }))
  return Ready.pipe(
    Layer.provideMerge(StartupReport.layer(config.consoleDir)),
    Layer.provideMerge(BootstrapLive),
    Layer.provideMerge(Linger),
    Layer.provideMerge(serve),
    Layer.provideMerge(App),
    Layer.provideMerge(Layer.merge(HttpRouter.layer, NodeHttpServer.layerHttpServices)),
    // Built first and released last: its "stopped" line follows everything else's shutdown.
    Layer.provideMerge(ShutdownLog.layer),
    Layer.provideMerge(connections),
    Layer.provideMerge(ServedRequests.layer)
  )
}))
