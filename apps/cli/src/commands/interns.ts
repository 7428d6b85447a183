import { Command } from "effect/cli"
import { create } from "./interns/create.ts"
import { del } from "./interns/delete.ts"
import { get } from "./interns/get.ts"
import { list } from "./interns/list.ts"
import { provision } from "./interns/provision.ts"
import { suspend } from "./interns/suspend.ts"
import { update } from "./interns/update.ts"

export const interns = Command.make("interns").pipe(
  Command.withDescription("Manage interns: named assistant runtimes of your workspace"),
  Command.withExamples([
    { command: "switchyard interns list", description: "Every intern your key can see" },
    { command: "switchyard interns update support-bot --model openai/gpt-4o", description: "Change an intern's model" },
    { command: "switchyard interns suspend support-bot", description: "Stop its runtime, keeping its disk" }
  ]),
  Command.withSubcommands([list, get, create, update, suspend, provision, del])
)
