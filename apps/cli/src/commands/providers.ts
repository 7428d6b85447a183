import { Command } from "effect/cli"
import { add } from "./providers/add.ts"
import { disable } from "./providers/disable.ts"
import { list } from "./providers/list.ts"
import { remove } from "./providers/remove.ts"
import { test } from "./providers/test.ts"
import { update } from "./providers/update.ts"

export const providers = Command.make("providers").pipe(
  Command.withDescription("Providers: list them; add, change, disable, delete and test them at runtime (instance administrators)"),
  Command.withExamples([
    { command: "switchyard providers list", description: "Every provider, with its source and credential for an administrator" },
    { command: "switchyard providers test acme", description: "Call each of acme's endpoints once" }
  ]),
  Command.withSubcommands([list, add, update, disable, remove, test])
)
