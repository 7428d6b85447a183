import { GatewayClient } from "@switchyard/client/GatewayClient"
import { UpdateWorkspaceBody } from "@switchyard/core/schema/Workspace"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Failure from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as WorkspaceView from "./WorkspaceView.ts"

const text = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.withMetavar("TEXT"), Flag.withDescription(description), Flag.optional)

export const update = Command.make(
  "update",
  {
    workspace: WorkspaceView.refArgument,
    name: text("name", "New display name"),
    slug: text("slug", "New slug"),
    description: text("description", "New description (`none` clears it)"),
    cache: WorkspaceView.cacheFlag,
    only: WorkspaceView.providerListFlag("only", "The only providers the workspace's requests may use"),
    ignore: WorkspaceView.providerListFlag("ignore", "Providers the workspace's requests never use"),
    dataCollection: WorkspaceView.dataCollectionFlag,
    zdr: WorkspaceView.zdrFlag,
    json: SharedFlags.json
  },
  Effect.fn(function*({ cache, dataCollection, description, ignore, json, name, only, slug, workspace, zdr }) {
    const changes = {
      ...(Option.isSome(name) ? { name: name.value } : {}),
      ...(Option.isSome(slug) ? { slug: slug.value } : {}),
      ...(Option.isSome(description) ? { description: description.value === "none" ? null : description.value } : {}),
      ...(Option.isSome(cache) ? { cache: cache.value } : {}),
      ...(Option.isSome(only) ? { only: only.value } : {}),
      ...(Option.isSome(ignore) ? { ignore: ignore.value } : {}),
      ...(Option.isSome(dataCollection) ? { data_collection: dataCollection.value } : {}),
      ...(Option.isSome(zdr) ? { zdr: zdr.value } : {})
    }
    if (Object.keys(changes).length === 0) {
      return yield* new Failure.Usage({ message: "Nothing to change", hint: "Pass --name, --slug, --description, --cache, --only, --ignore, --data-collection or --zdr" })
    }
    const payload = yield* Failure.validate(UpdateWorkspaceBody, changes)
    const client = yield* GatewayClient
    const result = yield* client.workspaces.update({ params: { id: workspace }, payload })
    if (json) return yield* Output.json(result)
    yield* Output.record(WorkspaceView.pairs(result.data))
  }, Connection.withGateway)
).pipe(Command.withDescription(
  "Change a workspace's name, slug, description, embeddings cache switch or provider settings (only, ignore, data collection, ZDR), applied to its next requests (admins only)"
))
