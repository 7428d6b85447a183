import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import { Usage } from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"

export const revoke = Command.make(
  "revoke",
  {
    id: Argument.String("id").pipe(Argument.withDescription("The session to end"), Argument.optional),
    user: Flag.String("user").pipe(Flag.withMetavar("USER_ID"), Flag.withDescription("End every session of this person instead"), Flag.optional),
    json: SharedFlags.json
  },
  Effect.fn(function*({ id, user, json }) {
    const client = yield* GatewayClient
    if (Option.isSome(id) === Option.isSome(user)) {
      return yield* new Usage({ message: "Name a session id, or --user USER_ID for all of one person's sessions" })
    }
    const result = Option.isSome(id)
      ? yield* client.sessions.revoke({ params: { id: id.value } })
      : yield* client.sessions.revokeAll({ query: { user_id: Option.getOrThrow(user) } })
    if (json) return yield* Output.json(result)
    yield* Output.line(`Ended ${result.deleted} session${result.deleted === 1 ? "" : "s"}: the next request with ${result.deleted === 1 ? "its" : "their"} cookie answers 401.`)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("End a single sign-on session, or all of one person's"),
  Command.withExamples([
    { command: "switchyard sessions revoke 0b6d…", description: "End one session" },
    { command: "switchyard sessions revoke --user 6f1c…", description: "Sign a person out everywhere" }
  ])
)
