import { Command } from "effect/cli"
import { explain } from "./route/explain.ts"

export const route = Command.make("route").pipe(
  Command.withDescription("Explain routing decisions"),
  Command.withExamples([{ command: "switchyard route explain -m openai/text-embedding-3-small --sort price", description: "The route by price" }]),
  Command.withSubcommands([explain])
)
