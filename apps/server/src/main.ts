import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { ServerLive } from "./Server.ts"

const Announce = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  yield* Effect.logInfo(`Switchyard listening on ${HttpServer.formatAddress(server.address)}/api/v1`)
}))

Layer.launch(Announce.pipe(Layer.provideMerge(ServerLive))).pipe(NodeRuntime.runMain)
