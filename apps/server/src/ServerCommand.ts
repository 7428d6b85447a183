/**
 * The server's command line, `switchyard-server` (`node dist/main.mjs`): with no command it runs
 * the gateway; `mint-management-key` makes a management key in the store and prints it once.
 */
import { Effect, Layer } from "effect"
import { CliConfig, Command, Flag, GlobalFlag } from "effect/cli"
import packageJson from "../package.json" with { type: "json" }
import * as MintManagementKey from "./auth/MintManagementKey.ts"
import * as Gateway from "./Gateway.ts"
import * as StartupFailure from "./StartupFailure.ts"
import * as ApiKeyStoreLive from "./store/keys/ApiKeyStoreLive.ts"
import * as Database from "./store/database/Database.ts"

// With no command the gateway serves (Gateway.ts, which `main.ts` runs without this parser when
// there are no arguments at all).
const gateway = Command.make("switchyard-server", {}, () => Gateway.serve).pipe(
  Command.withDescription("The Switchyard gateway. With no command it serves; its settings are environment variables (docs/configuration.md).")
)

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
      Effect.provide(ApiKeyStoreLive.layer.pipe(Layer.provideMerge(Database.layer))),
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

/** Runs the command line `args` (the process's arguments after the script) to the process's exit. */
export const main = (args: ReadonlyArray<string>) =>
  Gateway.run(
    Command.runWith(root, { version: packageJson.version })(args).pipe(
      // Settings are environment variables (SWITCHYARD_LOG_LEVEL...): no flag competes with them.
      Effect.provideService(CliConfig.CliConfig, CliConfig.make({ builtIns: [GlobalFlag.Help, GlobalFlag.Version] }))
    )
  )
