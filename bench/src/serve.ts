// One benchmark process: `node src/serve.ts upstream|floor|effect-floor|peer '<options as JSON>'`. The harness
// starts each in its own process so that CPU time and memory are measured per process.
import * as Net from "node:net"
import * as NodeUrl from "node:url"
import * as EffectFloor from "./EffectFloor.ts"
import * as FastUpstream from "./FastUpstream.ts"
import * as PassThrough from "./PassThrough.ts"

const [role, json] = process.argv.slice(2)
const options = JSON.parse(json ?? "{}")

const onStop = (close: () => Promise<void>) => {
  const stop = () => {
    const timer = setTimeout(() => process.exit(0), 2_000)
    timer.unref()
    void close().then(() => process.exit(0))
  }
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}

switch (role) {
  case "upstream": {
    const server = await FastUpstream.start(options)
    onStop(server.close)
    break
  }
  case "floor": {
    const server = await PassThrough.start(options)
    onStop(server.close)
    break
  }
  case "effect-floor": {
    const server = await EffectFloor.start(options)
    onStop(server.close)
    break
  }
  case "peer": {
    // The peer listens on every interface unless told otherwise, and has no option for it.
    const listen = Net.Server.prototype.listen as (...args: Array<unknown>) => Net.Server
    Net.Server.prototype.listen = function(this: Net.Server, ...args: Array<unknown>) {
      if (typeof args[0] === "number" && (args[1] === undefined || typeof args[1] === "function")) {
        args.splice(1, args[1] === undefined ? 1 : 0, "127.0.0.1")
      }
      return listen.apply(this, args)
    } as typeof Net.Server.prototype.listen
    process.argv = [process.argv[0]!, "start-server.js", `--port=${options.port}`, "--headless"]
    process.once("SIGINT", () => process.exit(0))
    process.once("SIGTERM", () => process.exit(0))
    // Installed apart from the workspace (bench/peer, see PeerInstall.ts), so it is imported by path.
    await import(NodeUrl.pathToFileURL(options.entry).href)
    break
  }
  default:
    console.error(`unknown role ${role}: expected upstream, floor, effect-floor or peer`)
    process.exit(2)
}
