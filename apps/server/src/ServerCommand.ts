/**
 * The server's command line, `switchyard-server` (`node dist/main.mjs`): with no command it runs
 * the gateway; `mint-management-key` makes a management key in the store and prints it once.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import { CliConfig, Command, Flag, GlobalFlag } from "effect/cli"
import packageJson from "../package.json" with { type: "json" }
import * as MintManagementKey from "./auth/MintManagementKey.ts"
import * as GatewayLogger from "./observability/GatewayLogger.ts"
import * as Tracing from "./observability/Tracing.ts"
import { ServerLive } from "./Server.ts"
import * as StartupFailure from "./StartupFailure.ts"
import * as ApiKeyRepo from "./store/ApiKeyRepo.ts"
import * as Database from "./store/Database.ts"
import * as DataDirLock from "./store/DataDirLock.ts"
import * as Workers from "./Workers.ts"

// Production runs the bundle: `node dist/main.mjs` (what `pnpm start` runs after building it),
// with no V8 flags: memory is bounded by the bytes requests hold against the container's limit
// (http/MemoryBudget.ts), not by collecting all the time.
// Without an OTLP endpoint tracing is off: every named effect would build a span, capture a stack
// trace for it and drop it (about a third of the CPU of a request, measured with pnpm bench).
// A failure to start is one line on standard error (StartupFailure.ts) and exit code 1; SIGTERM
// and SIGINT stop the server gracefully (in-flight requests finish) with exit code 0, not the
// default 130.
const gateway = Command.make("switchyard-server", {}, () =>
  Effect.suspend(() => {
    const workers = Workers.parse(process.env.SWITCHYARD_WORKERS)
    if (typeof workers === "string") return Effect.fail(new Workers.WorkersSetting({ message: workers }))
    return workers === 1 || Workers.index() !== undefined ? Layer.launch(ServerLive) : supervise(workers)
  }).pipe(StartupFailure.report("cannot start"))
).pipe(
  Command.withDescription("The Switchyard gateway. With no command it serves; its settings are environment variables (README, Configuration).")
)

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

const mintManagementKey = Command.make(
  "mint-management-key",
  {
    workspace: Flag.String("workspace").pipe(
      Flag.withDescription("The workspace (by slug) whose first administrator owns the key"),
      Flag.withDefault("default")
    ),
    name: Flag.String("name").pipe(Flag.withDescription("The key's name"), Flag.withDefault("Recovery management key"))
  },
  (options) =>
    MintManagementKey.mint(options).pipe(
      Effect.flatMap(MintManagementKey.announce),
      Effect.provide(ApiKeyRepo.layer.pipe(Layer.provideMerge(Database.layer))),
      MintManagementKey.refuseWhileLocked,
      StartupFailure.report("cannot make a management key")
    )
).pipe(
  Command.withDescription(
    "Make a management key in the gateway's store (SWITCHYARD_DATA_DIR, or DATABASE_URL) and print its secret once: " +
      "the way back from a lost management key. On the embedded store (SQLite) stop the gateway first; on PostgreSQL it may keep running."
  ),
  Command.withExamples([
    { command: "switchyard-server mint-management-key", description: "A management key for the workspace `default`" },
    { command: "switchyard-server mint-management-key --workspace research --name \"Ops laptop\"", description: "For another workspace" }
  ])
)

const root = gateway.pipe(Command.withSubcommands([mintManagementKey]))

const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

/** Runs the command line `args` (the process's arguments after the script) to the process's exit. */
export const main = (args: ReadonlyArray<string>) =>
  Command.runWith(root, { version: packageJson.version })(args).pipe(
    // Settings are environment variables (SWITCHYARD_LOG_LEVEL...): no flag competes with them.
    Effect.provideService(CliConfig.CliConfig, CliConfig.make({ builtIns: [GlobalFlag.Help, GlobalFlag.Version] })),
    Effect.provide(Layer.mergeAll(GatewayLogger.layer, Tracing.layer, NodeServices.layer)),
    NodeRuntime.runMain({ disableErrorReporting: true, teardown })
  )
