import { GatewayClient } from "@switchyard/client/GatewayClient"
import type { AuditEntry } from "@switchyard/core/schema/Audit"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Output from "../Output.ts"
import * as SharedFlags from "../SharedFlags.ts"
import { verify } from "./audit/verify.ts"

const text = (name: string, metavar: string, description: string) =>
  Flag.String(name).pipe(Flag.withMetavar(metavar), Flag.withDescription(description), Flag.optional)

const columns: ReadonlyArray<Output.Column<AuditEntry>> = [
  { header: "ID", value: (e) => String(e.id), align: "right" },
  { header: "AT", value: (e) => Output.date(e.at) },
  { header: "ACTION", value: (e) => e.action },
  { header: "TARGET", value: (e) => Output.clip(`${e.target.type} ${e.target.id}`, 48) },
  { header: "ACTOR", value: (e) => e.actor.user?.email ?? e.actor.user?.sub ?? e.actor.key_name ?? (e.actor.key_hash?.slice(0, 12) ?? "-") },
  { header: "IP", value: (e) => e.ip ?? "-" }
]

export const audit = Command.make(
  "audit",
  {
    action: text("action", "ACTION", "Only this action (`key.create`) or resource (`key.*`)"),
    since: text("since", "DATE", "From this time on (ISO 8601)"),
    until: text("until", "DATE", "Before this time (ISO 8601)"),
    targetType: text("target-type", "TYPE", "Only entries about this kind of target (key, workspace, provider...)"),
    targetId: text("target-id", "ID", "Only entries about this target"),
    actor: text("actor", "HASH|USER", "Only entries by this key hash or user id"),
    workspace: text("workspace", "ID", "Only this workspace's entries"),
    limit: Flag.Int("limit").pipe(Flag.withDescription("At most this many entries, newest first (default 100)"), Flag.optional),
    json: SharedFlags.json
  },
  Effect.fn(function*(input) {
    const client = yield* GatewayClient
    const wanted = Option.getOrElse(input.limit, () => 100)
    const data: Array<AuditEntry> = []
    let cursor: number | undefined
    const given = <K extends string>(key: K, value: Option.Option<string>) => (Option.isSome(value) ? { [key]: value.value } : {})
    while (data.length < wanted) {
      const page = yield* client.audit.list({
        query: {
          ...given("action", input.action),
          ...given("since", input.since),
          ...given("until", input.until),
          ...given("target_type", input.targetType),
          ...given("target_id", input.targetId),
          ...given("actor", input.actor),
          ...given("workspace_id", input.workspace),
          limit: Math.min(500, wanted - data.length),
          ...(cursor !== undefined ? { cursor } : {})
        }
      })
      data.push(...page.data)
      if (page.next_cursor === null) break
      cursor = Number(page.next_cursor)
    }
    yield* Output.list(data, { json: input.json, columns, empty: "No entries." })
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Read the audit log of management actions, newest first (needs a management key)"),
  Command.withExamples([
    { command: "switchyard audit --action key.* --since 2026-01-01", description: "Every key change this year" },
    { command: "switchyard audit verify", description: "Check the log's hash chain" }
  ]),
  Command.withSubcommands([verify])
)
