import { Command } from "effect/cli"
import { add } from "./credits/add.ts"
import { show } from "./credits/show.ts"

export const credits = Command.make("credits").pipe(
  Command.withDescription("The workspace's prepaid credits (USD): opt-in, the first `credits add` makes the balance limit spending"),
  Command.withExamples([{ command: "switchyard credits add 10", description: "Add $10 to your default workspace" }]),
  Command.withSubcommands([show, add])
)
