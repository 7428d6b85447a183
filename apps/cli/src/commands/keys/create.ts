import { GatewayClient } from "@switchyard/client/GatewayClient"
import { CreateKeyBody } from "@switchyard/core/schema/ApiKey"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Failure from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as KeyView from "./KeyView.ts"

export const create = Command.make(
  "create",
  {
    name: Argument.String("name").pipe(Argument.withDescription("Name of the new key (1 to 200 characters)")),
    limit: Flag.Finite("limit").pipe(Flag.withMetavar("USD"), Flag.withDescription("Spending limit in credits (USD)"), Flag.optional),
    limitReset: Flag.Literals("limit-reset", ["daily", "weekly", "monthly"]).pipe(
      Flag.withDescription("When the limit starts again (default: never)"),
      Flag.optional
    ),
    includeByok: SharedFlags.toggle("include-byok-in-limit", "Count bring-your-own-key usage against the limit"),
    expiresAt: Flag.String("expires-at").pipe(Flag.withMetavar("DATE-TIME"), Flag.withDescription("Expiry, ISO 8601 with a time zone (2030-01-31T23:59:59Z)"), Flag.optional),
    workspace: Flag.String("workspace").pipe(Flag.withMetavar("ID"), Flag.withDescription("Workspace of the key (default: your default workspace)"), Flag.optional),
    management: SharedFlags.toggle(
      "management",
      "A management key (an admin of the workspace only). Unless --scope workspace, it reaches every workspace of its user"
    ),
    scope: Flag.Literals("scope", ["user", "workspace"]).pipe(
      Flag.withDescription("What a management key reaches: every workspace of its user (user, the default) or its workspace only"),
      Flag.optional
    ),
    json: SharedFlags.json
  },
  Effect.fn(function*({ expiresAt, includeByok, json, limit, limitReset, management, name, scope, workspace }) {
    const payload = yield* Failure.validate(CreateKeyBody, {
      name,
      ...(Option.isSome(limit) ? { limit: limit.value } : {}),
      ...(Option.isSome(limitReset) ? { limit_reset: limitReset.value } : {}),
      ...(includeByok ? { include_byok_in_limit: true } : {}),
      ...(Option.isSome(expiresAt) ? { expires_at: expiresAt.value } : {}),
      ...(Option.isSome(workspace) ? { workspace_id: workspace.value } : {}),
      ...(management ? { kind: "management" } : {}),
      ...(Option.isSome(scope) ? { scope: scope.value } : {})
    })
    const client = yield* GatewayClient
    const created = yield* client.keys.create({ payload })
    if (json) return yield* Output.json(created)
    yield* KeyView.detail(created.data)
    yield* Output.line("")
    yield* Output.line("The secret is shown only this once; store it now:")
    yield* Output.line(`  ${created.key}`)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Create an API key (standard, or with --management a management key) and print its secret once"),
  Command.withExamples([
    { command: "switchyard keys create ci-pipeline --limit 25 --limit-reset monthly", description: "A key that may spend $25 a month" },
    { command: "switchyard keys create batch --expires-at 2030-01-31T23:59:59Z --json", description: "An expiring key, as JSON (the secret is in `key`)" },
    {
      command: "switchyard keys create team-b-admin --management --scope workspace --workspace <ID>",
      description: "A management key that reaches that workspace only (without --scope workspace it reaches every workspace of your user)"
    }
  ])
)
