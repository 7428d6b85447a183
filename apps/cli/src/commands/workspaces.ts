import { Command } from "effect/cli"
import { create } from "./workspaces/create.ts"
import { del } from "./workspaces/delete.ts"
import { get } from "./workspaces/get.ts"
import { list } from "./workspaces/list.ts"
import { addMembers, members, removeMembers } from "./workspaces/members.ts"
import { update } from "./workspaces/update.ts"

export const workspaces = Command.make("workspaces").pipe(
  Command.withDescription("Manage workspaces and their members (needs a management key)"),
  Command.withExamples([
    { command: "switchyard workspaces create team-b", description: "A new workspace, with you as its admin" },
    { command: "switchyard workspaces add-members team-b user_bea", description: "Add a member" }
  ]),
  Command.withSubcommands([list, create, get, update, del, members, addMembers, removeMembers])
)
