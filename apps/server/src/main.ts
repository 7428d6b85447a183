import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import * as GatewayLogger from "./observability/GatewayLogger.ts"
import * as Tracing from "./observability/Tracing.ts"
import { ServerLive } from "./Server.ts"

const Announce = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  yield* Effect.logInfo(`Switchyard listening on ${HttpServer.formatAddress(server.address)}/api/v1`)
}))

// `pnpm start` runs this with `--max-semi-space-size=8`: V8 otherwise lets the young generation
// reach 64 MB and keep it resident (docs/decisions.md, Performance). A flag set from here would
// come too late: V8 sizes its heap before any code runs.
// Without an OTLP endpoint tracing is off: every named effect would build a span, capture a stack
// trace for it and drop it (about a third of the CPU of a request, measured with pnpm bench).
Layer.launch(Announce.pipe(Layer.provideMerge(ServerLive))).pipe(
  Effect.provide(Layer.mergeAll(GatewayLogger.layer, Tracing.layer)),
  NodeRuntime.runMain
)
