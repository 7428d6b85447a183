import { Command } from "effect/cli"
import { del } from "./budgets/delete.ts"
import { list } from "./budgets/list.ts"
import { set } from "./budgets/set.ts"

export const budgets = Command.make("budgets").pipe(
  Command.withDescription("A workspace's spending budgets per interval (needs a management key)"),
  Command.withSubcommands([list, set, del])
)
