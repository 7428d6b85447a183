import { Command } from "effect/cli"
import { add } from "./credits/add.ts"
import { show } from "./credits/show.ts"

export const credits = Command.make("credits").pipe(
  Command.withDescription("The workspace's credits (USD) that embeddings are paid from"),
  Command.withExamples([{ command: "switchyard credits add 10", description: "Add $10 to your default workspace" }]),
  Command.withSubcommands([show, add])
)
