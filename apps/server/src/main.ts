import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import { HttpServer } from "effect/http"
import * as GatewayLogger from "./observability/GatewayLogger.ts"
import * as Tracing from "./observability/Tracing.ts"
import { ServerLive } from "./Server.ts"
import * as StartupFailure from "./StartupFailure.ts"

const Announce = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  yield* Effect.logInfo(`Switchyard listening on ${HttpServer.formatAddress(server.address)}/api/v1`)
}))

// Production runs the bundle: `node --max-semi-space-size=8 --v8-pool-size=1 dist/main.mjs` (what `pnpm start`
// runs after building it). The flags keep V8's young generation from growing to 64 MB and staying
// resident, and V8 to one background thread, whose compile memory (PGlite's WebAssembly tier-up)
// stays resident per thread (docs/decisions.md, Performance); set from here they would come too late.
// Without an OTLP endpoint tracing is off: every named effect would build a span, capture a stack
// trace for it and drop it (about a third of the CPU of a request, measured with pnpm bench).
// A failure to start is one line on standard error (StartupFailure.ts) and exit code 1; SIGTERM
// and SIGINT stop the server gracefully (in-flight requests finish) with exit code 0, not the
// default 130.
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

Layer.launch(Announce.pipe(Layer.provideMerge(ServerLive))).pipe(
  Effect.provide(Layer.mergeAll(GatewayLogger.layer, Tracing.layer)),
  StartupFailure.report,
  NodeRuntime.runMain({ disableErrorReporting: true, teardown })
)
