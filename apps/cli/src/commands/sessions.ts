import { Command } from "effect/cli"
import { list } from "./sessions/list.ts"
import { revoke } from "./sessions/revoke.ts"

export const sessions = Command.make("sessions").pipe(
  Command.withDescription("List and end the single sign-on sessions of people (needs an instance administrator's management key)"),
  Command.withExamples([
    { command: "switchyard sessions list", description: "Who is signed in" },
    { command: "switchyard sessions revoke --user 6f1c…", description: "Sign a person out everywhere" }
  ]),
  Command.withSubcommands([list, revoke])
)
