import { Effect } from "effect"
import { CliConfig, Command, GlobalFlag } from "effect/cli"
import packageJson from "../package.json" with { type: "json" }
import { activity } from "./commands/activity.ts"
import { audit } from "./commands/audit.ts"
import { batch } from "./commands/batch.ts"
import { budgets } from "./commands/budgets.ts"
import { credits } from "./commands/credits.ts"
import { embed } from "./commands/embed.ts"
import { rerank } from "./commands/rerank.ts"
import { generation } from "./commands/generation.ts"
import { interns } from "./commands/interns.ts"
import { keys } from "./commands/keys.ts"
import { sessions } from "./commands/sessions.ts"
import { models } from "./commands/models.ts"
import { providers } from "./commands/providers.ts"
import { route } from "./commands/route.ts"
import { workspaces } from "./commands/workspaces.ts"
import * as Connection from "./Connection.ts"
import * as Failure from "./Failure.ts"

const version = packageJson.version

const root = Command.make("switchyard").pipe(
  Command.withDescription([
    "The command line of the Switchyard gateway.",
    "",
    "Reads SWITCHYARD_BASE_URL (default http://127.0.0.1:8080/api/v1) and SWITCHYARD_API_KEY;",
    "--base-url and --api-key override them. Prints tables on a terminal and JSON with --json.",
    "",
    "Exit codes:",
    ...Failure.exitCodeTable.map(([code, meaning]) => `  ${String(code).padStart(3)}  ${meaning}`)
  ].join("\n  ")),
  Command.withExamples([
    { command: "switchyard embed -m switchyard/local-embed \"hello world\"", description: "Embed a text with the built-in local model" },
    { command: "switchyard embed -m switchyard/local-embed --file docs.jsonl --out vectors.jsonl", description: "Embed a corpus; rerun to resume" },
    { command: "switchyard rerank -m switchyard/local-rerank --query \"plants\" \"a train\" \"photosynthesis\"", description: "Rerank documents with the built-in local model" },
    { command: "switchyard route explain -m openai/text-embedding-3-small --zdr", description: "Which providers a request would use, and why" },
    { command: "switchyard keys list --json", description: "Your keys, for a script" },
    { command: "switchyard interns suspend support-bot", description: "Suspend an intern" }
  ]),
  Command.withSubcommands([embed, rerank, batch, route, models, keys, credits, interns, workspaces, budgets, generation, activity, providers, audit, sessions]),
  Command.withGlobalFlags([Connection.BaseUrl, Connection.ApiKey])
)

export const run = (args: ReadonlyArray<string>) =>
  Command.runWith(root, { version })(args).pipe(
    Effect.provideService(CliConfig.CliConfig, CliConfig.make({ builtIns: [GlobalFlag.Help, GlobalFlag.Version, GlobalFlag.Completions] })),
    Effect.catch((error) =>
      Effect.gen(function*() {
        const failure = yield* Failure.describe(error, { baseUrl: "", hasKey: false })
        yield* Failure.print(failure)
        if (failure.exitCode !== Failure.ExitCode.ok) return yield* failure
      })
    )
  )
