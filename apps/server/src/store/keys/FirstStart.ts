/**
 * The statements of a first start and of a management key minted from the command line: the
 * workspace `default`, its first user and keys, written once under a lock that replicas starting
 * together on one PostgreSQL take turns on (on SQLite the transaction's `BEGIN IMMEDIATE` already
 * holds the file's only write lock).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"

/** A key first start writes: its kind, name, hash and label (never its secret). */
export interface FirstKey {
  readonly kind: "management" | "standard"
  readonly name: string
  readonly hash: string
  readonly label: string
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const count = (rows: ReadonlyArray<{ n: number }>) => rows[0]?.n ?? 0
  return {
    /** Runs `effect` in one transaction that no other replica's first start runs beside. */
    locked: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql.withTransaction(
        Effect.andThen(
          sql.onDialectOrElse({ pg: () => Effect.asVoid(sql`SELECT pg_advisory_xact_lock(7031)`), orElse: () => Effect.void }),
          effect
        )
      ),
    /** Workspaces ever made, deleted ones included: first start runs on a store with none. */
    workspaces: Effect.map(sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM workspaces`, count),
    /** Workspaces not deleted. */
    liveWorkspaces: Effect.map(
      sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM workspaces WHERE deleted_at IS NULL`,
      count
    ),
    /** Whether a key with this hash exists and is not deleted. */
    liveKey: (hash: string) =>
      Effect.map(
        sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM api_keys WHERE hash = ${hash} AND deleted_at IS NULL`,
        (rows) => count(rows) > 0
      ),
    /** The workspace `default`, its first user (an admin) and its first keys; the ids made. */
    create: (keys: ReadonlyArray<FirstKey>) =>
      Effect.gen(function*() {
        const workspaceId = Crypto.randomUUID()
        const userId = Crypto.randomUUID()
        yield* sql`INSERT INTO workspaces (id, slug, name) VALUES (${workspaceId}, 'default', 'Default')`
        yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES (${userId}, 'admin', ${workspaceId})`
        yield* sql`INSERT INTO memberships (user_id, workspace_id, role) VALUES (${userId}, ${workspaceId}, 'admin')`
        for (const key of keys) {
          yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id)
            VALUES (${Crypto.randomUUID()}, ${key.hash}, ${key.kind}, ${key.name}, ${key.label}, ${userId}, ${workspaceId})`
        }
        return { workspaceId, userId }
      }),
    /** The first administrator (or owner) of the live workspace `slug`, by membership age. */
    firstAdministrator: (slug: string) =>
      Effect.map(
        sql<{ workspace_id: string; user_id: string }>`SELECT w.id AS workspace_id, m.user_id
          FROM workspaces w JOIN memberships m ON m.workspace_id = w.id AND m.role <> 'member'
          WHERE w.slug = ${slug} AND w.deleted_at IS NULL
          ORDER BY m.created_at, m.user_id LIMIT 1`,
        (rows) => rows[0]
      )
  }
})
