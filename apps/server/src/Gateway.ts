/**
 * The gateway, `switchyard-server` with no command (`node dist/main.mjs`), and the runtime every
 * command of the server runs in. `main.ts` loads this module alone when there are no arguments:
 * the command line's parser (`effect/cli`, ServerCommand.ts) builds an `Intl.Segmenter` when it is
 * loaded, which maps ICU's text-segmentation data (megabytes of the Node binary, resident for the
 * process's life) into a gateway that never prints help.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import * as GatewayLogger from "./observability/GatewayLogger.ts"
import * as Tracing from "./observability/Tracing.ts"
import { ServerLive } from "./Server.ts"
import * as StartupFailure from "./StartupFailure.ts"
import * as Database from "./store/database/Database.ts"
import * as DataDirLock from "./store/sqlite/DataDirLock.ts"
import * as Workers from "./Workers.ts"

// Production runs the bundle: `node dist/main.mjs` (what `pnpm start` runs after building it),
// with no V8 flags: memory is bounded by the bytes requests hold against the container's limit
// (http/MemoryBudget.ts), not by collecting all the time.
// Without an OTLP endpoint tracing is off: every named effect would build a span, capture a stack
// trace for it and drop it (about a third of the CPU of a request, measured with pnpm bench).
// A failure to start is one line on standard error (StartupFailure.ts) and exit code 1; SIGTERM
// and SIGINT stop the server gracefully (in-flight requests finish) with exit code 0, not the
// default 130.
export const serve = Effect.gen(function*() {
  const workers = yield* Workers.count.pipe(Effect.mapError((error) => new Workers.WorkersSetting({ message: error.cause.message })))
  return yield* workers === 1 || Workers.index() !== undefined ? Layer.launch(ServerLive) : supervise(workers)
}).pipe(StartupFailure.report("cannot start"))

/**
 * The primary of `SWITCHYARD_WORKERS` processes: holds the data directory's lock (on the embedded
 * store) while its workers serve, and stops them gracefully when it is stopped.
 */
const supervise = (workers: number) =>
  Effect.scoped(Effect.gen(function*() {
    const choice = yield* Database.StoreConfig
    if (choice.kind === "sqlite") yield* DataDirLock.acquire(choice.dataDir)
    const running = Workers.primary(workers, (line) => process.stderr.write(`${line}\n`))
    const code = yield* Effect.callback<number>((resume) => {
      void running.done.then((code) => resume(Effect.succeed(code)))
      // Interrupted (SIGTERM, SIGINT): the workers stop gracefully before the lock is let go.
      return Effect.promise(() => running.stop())
    })
    if (code !== 0) process.exitCode = code
  }))

const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

/** Runs `program` (a command of the server) to the process's exit, with the gateway's logger and tracing. */
export const run = <E>(program: Effect.Effect<void, E, NodeServices.NodeServices>) =>
  program.pipe(
    Effect.provide(Layer.mergeAll(GatewayLogger.layer, Tracing.layer, NodeServices.layer)),
    NodeRuntime.runMain({ disableErrorReporting: true, teardown })
  )

/** The gateway to the process's exit. */
export const main = () => run(serve)
