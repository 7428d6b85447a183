import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"

interface SessionRow {
  readonly id: string
  readonly user: { readonly id: string; readonly sub: string; readonly email: string | null; readonly name: string | null }
  readonly created_at: string
  readonly last_seen_at: string
  readonly expires_at: string
}

const columns: ReadonlyArray<Output.Column<SessionRow>> = [
  { header: "ID", value: (s) => s.id },
  { header: "PERSON", value: (s) => Output.clip(s.user.email ?? s.user.name ?? s.user.sub, 40) },
  { header: "USER ID", value: (s) => s.user.id },
  { header: "SIGNED IN", value: (s) => Output.date(s.created_at) },
  { header: "LAST SEEN", value: (s) => Output.date(s.last_seen_at) },
  { header: "EXPIRES", value: (s) => Output.date(s.expires_at) }
]

export const list = Command.make(
  "list",
  {
    user: Flag.String("user").pipe(Flag.withMetavar("USER_ID"), Flag.withDescription("Only this person's sessions (their user id)"), Flag.optional),
    json: SharedFlags.json
  },
  Effect.fn(function*({ user, json }) {
    const client = yield* GatewayClient
    const page = yield* client.sessions.list({ query: Option.isSome(user) ? { user_id: user.value } : {} })
    yield* Output.list(page.data, { json, columns, empty: "No open sessions." })
  }, Connection.withGateway)
).pipe(
  Command.withDescription("List the open single sign-on sessions, newest first"),
  Command.withAlias("ls"),
  Command.withExamples([{ command: "switchyard sessions list --user 6f1c…", description: "One person's sessions" }])
)
