import { GatewayClient } from "@switchyard/client/GatewayClient"
import type { WorkspaceMember } from "@switchyard/core/schema/Workspace"
import { Effect } from "effect"
import { Argument, Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as WorkspaceView from "./WorkspaceView.ts"

const users = Argument.String("user").pipe(Argument.withDescription("User ids"), Argument.variadic({ min: 1 }))

export const members = Command.make(
  "members",
  { workspace: WorkspaceView.refArgument, json: SharedFlags.json },
  Effect.fn(function*({ json, workspace }) {
    const client = yield* GatewayClient
    const data: Array<WorkspaceMember> = []
    for (let offset = 0;;) {
      const page = yield* client.workspaces.listMembers({ params: { id: workspace }, query: { offset, limit: 100 } })
      data.push(...page.data)
      offset += page.data.length
      if (page.data.length === 0 || offset >= page.total_count) break
    }
    yield* Output.list(data, { json, columns: WorkspaceView.memberColumns, empty: "No members." })
  }, Connection.withGateway)
).pipe(Command.withDescription("List a workspace's members"))

export const addMembers = Command.make(
  "add-members",
  { workspace: WorkspaceView.refArgument, users, json: SharedFlags.json },
  Effect.fn(function*({ json, users, workspace }) {
    const client = yield* GatewayClient
    const result = yield* client.workspaces.addMembers({ params: { id: workspace }, payload: { user_ids: users } })
    if (json) return yield* Output.json(result)
    yield* Output.line(`Added ${result.added_count} member(s).`)
  }, Connection.withGateway)
).pipe(Command.withDescription("Add users to a workspace as members (admins only)"))

export const removeMembers = Command.make(
  "remove-members",
  { workspace: WorkspaceView.refArgument, users, json: SharedFlags.json },
  Effect.fn(function*({ json, users, workspace }) {
    const client = yield* GatewayClient
    const result = yield* client.workspaces.removeMembers({ params: { id: workspace }, payload: { user_ids: users } })
    if (json) return yield* Output.json(result)
    yield* Output.line(`Removed ${result.removed_count} member(s).`)
  }, Connection.withGateway)
).pipe(Command.withDescription("Remove users from a workspace (admins only)"))
