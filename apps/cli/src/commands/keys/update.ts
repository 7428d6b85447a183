import { GatewayClient } from "@switchyard/client/GatewayClient"
import { UpdateKeyBody } from "@switchyard/core/schema/ApiKey"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Failure from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as KeyView from "./KeyView.ts"

const orNone = (value: Option.Option<string>, parse: (text: string) => unknown = (text) => text) =>
  Option.map(value, (text) => (text.trim().toLowerCase() === "none" ? null : parse(text.trim())))

export const update = Command.make(
  "update",
  {
    hash: KeyView.hashArgument,
    name: Flag.String("name").pipe(Flag.withDescription("New name"), Flag.optional),
    disable: SharedFlags.toggle("disable", "Disable the key (requests with it answer 401)"),
    enable: SharedFlags.toggle("enable", "Enable a disabled key"),
    limit: Flag.String("limit").pipe(Flag.withMetavar("USD|none"), Flag.withDescription("New spending limit in credits, or none"), Flag.optional),
    limitReset: Flag.String("limit-reset").pipe(Flag.withMetavar("daily|weekly|monthly|none"), Flag.withDescription("When the limit starts again"), Flag.optional),
    includeByok: Flag.Boolean("include-byok-in-limit").pipe(
      Flag.withDescription("Count bring-your-own-key usage against the limit (--no-include-byok-in-limit to stop)"),
      Flag.optional
    ),
    expiresAt: Flag.String("expires-at").pipe(Flag.withMetavar("DATE-TIME|none"), Flag.withDescription("New expiry (ISO 8601 with a time zone), or none"), Flag.optional),
    json: SharedFlags.json
  },
  Effect.fn(function*(input) {
    if (input.disable && input.enable) {
      return yield* new Failure.Usage({ message: "--disable and --enable contradict each other" })
    }
    const changes = {
      ...Option.match(input.name, { onNone: () => ({}), onSome: (name) => ({ name }) }),
      ...(input.disable ? { disabled: true } : input.enable ? { disabled: false } : {}),
      ...Option.match(orNone(input.limit, Number), { onNone: () => ({}), onSome: (limit) => ({ limit }) }),
      ...Option.match(orNone(input.limitReset), { onNone: () => ({}), onSome: (limit_reset) => ({ limit_reset }) }),
      ...Option.match(input.includeByok, { onNone: () => ({}), onSome: (include_byok_in_limit) => ({ include_byok_in_limit }) }),
      ...Option.match(orNone(input.expiresAt), { onNone: () => ({}), onSome: (expires_at) => ({ expires_at }) })
    }
    if (Object.keys(changes).length === 0) {
      return yield* new Failure.Usage({
        message: "Nothing to change",
        hint: "Give at least one of --name, --disable, --enable, --limit, --limit-reset, --include-byok-in-limit, --expires-at."
      })
    }
    const payload = yield* Failure.validate(UpdateKeyBody, changes)
    const client = yield* GatewayClient
    const { data } = yield* client.keys.update({ params: { hash: yield* KeyView.resolveHash(input.hash) }, payload })
    if (input.json) return yield* Output.json({ data })
    yield* KeyView.detail(data)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Change a key's name, status, limit or expiry"),
  Command.withExamples([
    { command: "switchyard keys update 815e4b8669f0 --disable", description: "Disable a key" },
    { command: "switchyard keys update 815e4b8669f0 --limit 100 --limit-reset weekly", description: "Allow $100 a week" },
    { command: "switchyard keys update 815e4b8669f0 --limit none --expires-at none", description: "Remove the limit and the expiry" }
  ])
)

