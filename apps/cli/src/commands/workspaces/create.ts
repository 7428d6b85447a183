import { GatewayClient } from "@switchyard/client/GatewayClient"
import { CreateWorkspaceBody } from "@switchyard/core/schema/Workspace"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Failure from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as WorkspaceView from "./WorkspaceView.ts"

export const create = Command.make(
  "create",
  {
    slug: Argument.String("slug").pipe(Argument.withDescription("Short name: lowercase letters, digits and inner hyphens")),
    name: Flag.String("name").pipe(Flag.withMetavar("TEXT"), Flag.withDescription("Display name (default: the slug)"), Flag.optional),
    description: Flag.String("description").pipe(Flag.withMetavar("TEXT"), Flag.withDescription("What the workspace is for"), Flag.optional),
    cache: WorkspaceView.cacheFlag,
    json: SharedFlags.json
  },
  Effect.fn(function*({ cache, description, json, name, slug }) {
    const payload = yield* Failure.validate(CreateWorkspaceBody, {
      slug,
      name: Option.getOrElse(name, () => slug),
      ...(Option.isSome(description) ? { description: description.value } : {}),
      ...(Option.isSome(cache) ? { cache: cache.value } : {})
    })
    const client = yield* GatewayClient
    const result = yield* client.workspaces.create({ payload })
    if (json) return yield* Output.json(result)
    yield* Output.record(WorkspaceView.pairs(result.data))
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Create a workspace; you become its admin (needs a management key)"),
  Command.withExamples([{ command: "switchyard workspaces create team-b --name \"Team B\"", description: "A workspace for team B" }])
)
