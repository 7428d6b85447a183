import { Config, Console, Effect, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as KeySecret from "./KeySecret.ts"

export const BootstrapConfig = Config.all({
  managementKey: Config.option(Config.Redacted("SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY")),
  apiKey: Config.option(Config.Redacted("SWITCHYARD_BOOTSTRAP_API_KEY"))
})

export interface Bootstrapped {
  readonly workspaceId: string
  readonly userId: string
  readonly managementKey: Redacted.Redacted<string>
  readonly apiKey: Redacted.Redacted<string>
}

const secretOf = (given: Option.Option<Redacted.Redacted<string>>) =>
  Option.getOrElse(
    Option.filter(given, (s) => Redacted.value(s).length > 0),
    () => Redacted.make(KeySecret.generate())
  )

/**
 * On an empty store: the workspace `default`, its first user, one management key and one standard
 * key. Runs under a transaction-scoped advisory lock, so replicas starting together create them
 * once. Returns `None` when the store already had a workspace.
 */
export const bootstrap = Effect.fn("Bootstrap.bootstrap")(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* BootstrapConfig
  return yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(7031)`
    const existing = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM workspaces`
    if ((existing[0]?.n ?? 0) > 0) return Option.none<Bootstrapped>()
    const workspaceId = Crypto.randomUUID()
    const userId = Crypto.randomUUID()
    const managementKey = secretOf(config.managementKey)
    const apiKey = secretOf(config.apiKey)
    yield* sql`INSERT INTO workspaces (id, slug, name) VALUES (${workspaceId}, 'default', 'Default')`
    yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES (${userId}, 'admin', ${workspaceId})`
    yield* sql`INSERT INTO memberships (user_id, workspace_id, role) VALUES (${userId}, ${workspaceId}, 'admin')`
    const insertKey = (kind: "management" | "standard", name: string, secret: Redacted.Redacted<string>) =>
      sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id)
        VALUES (${Crypto.randomUUID()}, ${KeySecret.hash(Redacted.value(secret))}, ${kind}, ${name},
          ${label(Redacted.value(secret))}, ${userId}, ${workspaceId})`
    yield* insertKey("management", "Bootstrap management key", managementKey)
    yield* insertKey("standard", "Bootstrap API key", apiKey)
    return Option.some<Bootstrapped>({ workspaceId, userId, managementKey, apiKey })
  }))
})

/**
 * A key's label: enough of the secret to recognise it, never enough to use it.
 */
export const label = (secret: string): string => `${secret.slice(0, 12)}...${secret.slice(-3)}`

/**
 * Prints the first-start keys once, on standard output (never through the logger).
 */
export const announce = (keys: Bootstrapped) =>
  Console.log(
    [
      "",
      "Switchyard created the workspace `default` and its first keys. They are shown only this once:",
      `  management key: ${Redacted.value(keys.managementKey)}`,
      `  API key:        ${Redacted.value(keys.apiKey)}`,
      ""
    ].join("\n")
  )
