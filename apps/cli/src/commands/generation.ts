import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Argument, Command } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Output from "../Output.ts"
import * as SharedFlags from "../SharedFlags.ts"

export const generation = Command.make(
  "generation",
  {
    id: Argument.String("id").pipe(Argument.withDescription("The generation id (a response's `id`, header x-generation-id)")),
    json: SharedFlags.json
  },
  Effect.fn(function*({ id, json }) {
    const client = yield* GatewayClient
    const result = yield* client.activity.generation({ query: { id } })
    if (json) return yield* Output.json(result)
    const g = result.data
    yield* Output.record([
      ["id", g.id],
      ["time", Output.date(g.created_at)],
      ["model", g.model],
      ["provider", `${g.provider_name ?? g.provider} (${g.provider})`],
      ["tokens", String(g.tokens_prompt ?? 0)],
      ["cost", Output.money(g.total_cost)],
      ["latency", g.latency === null ? "-" : `${g.latency} ms`],
      ["BYOK", g.is_byok ? "yes" : "no"],
      ["cached", g.cached ? "yes" : "no"],
      ["workspace", g.workspace_id ?? "-"]
    ])
  }, Connection.withGateway)
).pipe(Command.withDescription("What one served request used and cost"))
