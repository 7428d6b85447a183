import { Command } from "effect/cli"
import { create } from "./keys/create.ts"
import { current } from "./keys/current.ts"
import { del } from "./keys/delete.ts"
import { get } from "./keys/get.ts"
import { list } from "./keys/list.ts"
import { update } from "./keys/update.ts"

export const keys = Command.make("keys").pipe(
  Command.withDescription("Manage API keys (needs a management key, except `current`)"),
  Command.withExamples([
    { command: "switchyard keys list", description: "Your keys as a table" },
    { command: "switchyard keys create ci --limit 25 --limit-reset monthly", description: "A key that may spend $25 a month" },
    { command: "switchyard keys update 5247115bd6ab --disable", description: "Disable a key by the start of its hash" }
  ]),
  Command.withSubcommands([list, create, get, update, del, current])
)
