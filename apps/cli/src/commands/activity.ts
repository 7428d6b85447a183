import { GatewayClient } from "@switchyard/client/GatewayClient"
import type { ActivityItem } from "@switchyard/core/schema/Activity"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Output from "../Output.ts"
import * as SharedFlags from "../SharedFlags.ts"

interface Day {
  readonly date: string
  readonly requests: number
  readonly tokens: number
  readonly usage: number
  readonly byok: number
}

const barWidth = 30

/**
 * One row per day, newest first; the bar's length is the day's cost (usage and BYOK) against the
 * costliest day's.
 */
const days = (items: ReadonlyArray<ActivityItem>): ReadonlyArray<Day> => {
  const byDay = new Map<string, { requests: number; tokens: number; usage: number; byok: number }>()
  for (const item of items) {
    const day = byDay.get(item.date) ?? { requests: 0, tokens: 0, usage: 0, byok: 0 }
    day.requests += item.requests
    day.tokens += item.prompt_tokens
    day.usage += item.usage
    day.byok += item.byok_usage_inference
    byDay.set(item.date, day)
  }
  return [...byDay].sort(([a], [b]) => (a < b ? 1 : -1)).map(([date, d]) => ({ date, ...d }))
}

const bar = (value: number, max: number): string =>
  max <= 0 ? "" : "█".repeat(Math.max(value > 0 ? 1 : 0, Math.round((value / max) * barWidth)))

export const activity = Command.make(
  "activity",
  {
    date: Flag.String("date").pipe(Flag.withMetavar("YYYY-MM-DD"), Flag.withDescription("Only this UTC day"), Flag.optional),
    workspace: Flag.String("workspace").pipe(Flag.withMetavar("ID"), Flag.withDescription("Workspace id (default: the key's)"), Flag.optional),
    byModel: SharedFlags.toggle("by-model", "One row per day, model and provider instead of per day"),
    json: SharedFlags.json
  },
  Effect.fn(function*({ byModel, date, json, workspace }) {
    const client = yield* GatewayClient
    const result = yield* client.activity.activity({
      query: {
        ...(Option.isSome(date) ? { date: date.value } : {}),
        ...(Option.isSome(workspace) ? { workspace_id: workspace.value } : {})
      }
    })
    if (json) return yield* Output.json(result)
    if (byModel) {
      return yield* Output.table([
        { header: "DATE", value: (r: ActivityItem) => r.date },
        { header: "MODEL", value: (r) => r.model },
        { header: "PROVIDER", value: (r) => r.provider_name },
        { header: "REQUESTS", value: (r) => String(r.requests), align: "right" },
        { header: "TOKENS", value: (r) => String(r.prompt_tokens), align: "right" },
        { header: "COST", value: (r) => Output.money(r.usage), align: "right" },
        { header: "BYOK", value: (r) => Output.money(r.byok_usage_inference), align: "right" }
      ], result.data, "No activity in the last 30 days.")
    }
    const rows = days(result.data)
    const max = Math.max(0, ...rows.map((d) => d.usage + d.byok))
    const columns: Array<Output.Column<Day>> = [
      { header: "DATE", value: (d) => d.date },
      { header: "REQUESTS", value: (d) => String(d.requests), align: "right" },
      { header: "TOKENS", value: (d) => String(d.tokens), align: "right" },
      { header: "COST", value: (d) => Output.money(d.usage), align: "right" },
      { header: "BYOK", value: (d) => Output.money(d.byok), align: "right" }
    ]
    if (Output.stdoutIsTerminal()) columns.push({ header: "", value: (d) => bar(d.usage + d.byok, max) })
    yield* Output.table(columns, rows, "No activity in the last 30 days.")
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Daily usage of the last 30 days and today (UTC), from the ledger (needs a management key)"),
  Command.withExamples([
    { command: "switchyard activity", description: "A table with a bar per day" },
    { command: "switchyard activity --by-model --date 2030-06-01", description: "One day by model and provider" }
  ])
)
