import type { ApiKeyRecord } from "@switchyard/core/schema/ApiKey"
import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Argument } from "effect/cli"
import { Usage } from "../../Failure.ts"
import * as Output from "../../Output.ts"

export const shortHash = (hash: string) => hash.slice(0, 12)

/** What the key reaches: its own workspace, or (a management key of user scope) every workspace of its user. */
const reach = (k: ApiKeyRecord) =>
  k.kind === "management" && k.scope === "user" ? "user's workspaces" : "its workspace"

export const columns: ReadonlyArray<Output.Column<ApiKeyRecord>> = [
  { header: "HASH", value: (k) => shortHash(k.hash) },
  { header: "NAME", value: (k) => k.name },
  { header: "LABEL", value: (k) => k.label },
  { header: "STATUS", value: (k) => (k.disabled ? "disabled" : "active") },
  { header: "KIND", value: (k) => k.kind },
  { header: "REACH", value: reach },
  { header: "LIMIT", value: (k) => (k.limit === null ? "-" : `${Output.money(k.limit)}${k.limit_reset === null ? "" : `/${k.limit_reset}`}`), align: "right" },
  { header: "REMAINING", value: (k) => Output.money(k.limit_remaining), align: "right" },
  { header: "USAGE", value: (k) => Output.money(k.usage), align: "right" },
  { header: "CREATED", value: (k) => Output.date(k.created_at) },
  { header: "EXPIRES", value: (k) => Output.date(k.expires_at) }
]

export const pairs = (k: ApiKeyRecord): Array<readonly [string, string]> => [
  ["hash", k.hash],
  ["name", k.name],
  ["label", k.label],
  ["status", k.disabled ? "disabled" : "active"],
  ["kind", k.kind],
  ["reach", k.kind === "management" && k.scope === "user" ? "every workspace of its user (scope user)" : `workspace ${k.workspace_id} only (scope workspace)`],
  ["limit", k.limit === null ? "none" : Output.money(k.limit)],
  ["limit reset", k.limit_reset ?? "never"],
  ["limit remaining", Output.money(k.limit_remaining)],
  ["byok in limit", String(k.include_byok_in_limit)],
  ["usage", `${Output.money(k.usage)} (today ${Output.money(k.usage_daily)}, week ${Output.money(k.usage_weekly)}, month ${Output.money(k.usage_monthly)})`],
  ["byok usage", `${Output.money(k.byok_usage)} (today ${Output.money(k.byok_usage_daily)}, week ${Output.money(k.byok_usage_weekly)}, month ${Output.money(k.byok_usage_monthly)})`],
  ["created", Output.date(k.created_at)],
  ["updated", Output.date(k.updated_at)],
  ["expires", Output.date(k.expires_at)],
  ["creator user", Output.show(k.creator_user_id)],
  ["external user", Output.show(k.external_user)],
  ["workspace", k.workspace_id]
]

export const detail = (k: ApiKeyRecord) => Output.record(pairs(k))

const fullHash = /^[0-9a-f]{64}$/u

export const resolveHash = Effect.fnUntraced(function*(given: string) {
  const wanted = given.trim().toLowerCase()
  if (fullHash.test(wanted)) return wanted
  if (!/^[0-9a-f]{6,63}$/u.test(wanted)) {
    return yield* new Usage({
      message: `${JSON.stringify(given)} is not a key hash`,
      hint: "Give the key's hash, or at least its first 6 characters, as `switchyard keys list` shows it."
    })
  }
  const client = yield* GatewayClient
  const matches: Array<string> = []
  for (let offset = 0;; ) {
    const { data } = yield* client.keys.list({ query: { include_disabled: true, offset } })
    for (const key of data) if (key.hash.startsWith(wanted)) matches.push(key.hash)
    if (data.length === 0) break
    offset += data.length
  }
  if (matches.length === 1) return matches[0]!
  return yield* new Usage({
    message: matches.length === 0 ? `No key's hash starts with ${wanted}` : `${matches.length} keys' hashes start with ${wanted}`,
    hint: matches.length === 0 ? "`switchyard keys list --include-disabled` shows every key." : "Give more characters of the hash."
  })
})

export const hashArgument = Argument.String("hash").pipe(
  Argument.withDescription("The key's hash, or its first 6+ characters as `switchyard keys list` shows them")
)
