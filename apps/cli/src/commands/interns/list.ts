import { GatewayClient } from "@switchyard/client/GatewayClient"
import type { InternRecord } from "@switchyard/core/schema/Intern"
import { statuses } from "@switchyard/core/schema/Intern"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Failure from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as InternView from "./InternView.ts"

export const list = Command.make(
  "list",
  {
    status: SharedFlags.commaList("status", "STATUSES", `Only interns in these statuses (${statuses.join(", ")})`),
    json: SharedFlags.json
  },
  Effect.fn(function*({ json, status }) {
    const unknown = status.filter((s) => !(statuses as ReadonlyArray<string>).includes(s))
    if (unknown.length > 0) {
      return yield* new Failure.Usage({ message: `Unknown status ${unknown.join(", ")}`, hint: `Statuses are ${statuses.join(", ")}.` })
    }
    const client = yield* GatewayClient
    const all: Array<InternRecord> = []
    let cursor: string | undefined
    do {
      const page = yield* client.interns.list({
        query: {
          limit: 100,
          ...(status.length > 0 ? { status: status as Array<InternRecord["status"]> } : {}),
          ...(cursor === undefined ? {} : { starting_after: cursor })
        }
      })
      all.push(...page.data)
      cursor = page.has_more ? page.next_cursor : undefined
    } while (cursor !== undefined)
    yield* Output.list(all, { json, columns: InternView.columns, empty: "No interns." })
  }, Connection.withGateway)
).pipe(
  Command.withDescription("List the interns your key can see"),
  Command.withAlias("ls"),
  Command.withExamples([
    { command: "switchyard interns list", description: "Every intern, as a table" },
    { command: "switchyard interns list --status running,provisioning --json", description: "Busy interns, as JSON" }
  ])
)
