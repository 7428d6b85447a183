import { Command } from "effect/cli"
import { list } from "./models/list.ts"

export const models = Command.make("models").pipe(
  Command.withDescription("Embedding models"),
  Command.withExamples([{ command: "switchyard models list", description: "Every embedding model with its price" }]),
  Command.withSubcommands([list])
)
