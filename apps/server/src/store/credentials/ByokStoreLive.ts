import { fromSqlError } from "@switchyard/core/store/StoreUnavailable"
import type { ByokKey } from "@switchyard/core/schema/Byok"
import { ByokStore, CredentialUnreadable } from "@switchyard/core/store/ByokStore"
import { Cache, Data, Duration, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import { flag, type Flag, type Instant, iso } from "../sql/Columns.ts"
import { CredentialCipher } from "./CredentialCipher.ts"
import * as Span from "../../instrumentation/Span.ts"

class CredentialKeyMismatch extends Data.TaggedError("CredentialKeyMismatch")<{ readonly message: string }> {}

interface CredentialRow {
  readonly id: string
  readonly workspace_id: string
  readonly provider: string
  readonly name: string | null
  readonly label: string
  readonly disabled: Flag
  readonly sort_order: number
  readonly created_at: Instant
}

const aad = (id: string, workspaceId: string, provider: string) => `byok:${id}:${workspaceId}:${provider}`

/**
 * What a credential's record shows of its secret: the first three and last four characters of a
 * long secret, nothing of a short one.
 */
const labelOf = (secret: string): string => (secret.length >= 16 ? `${secret.slice(0, 3)}...${secret.slice(-4)}` : "...")

const toKey = (row: CredentialRow): ByokKey => ({
  id: row.id,
  provider: row.provider,
  name: row.name,
  label: row.label,
  disabled: flag(row.disabled),
  sort_order: Number(row.sort_order),
  workspace_id: row.workspace_id,
  created_at: iso(row.created_at),
  allowed_api_key_hashes: null,
  allowed_models: null,
  allowed_user_ids: null,
  declared_zdr: null,
  is_byok_only: false,
  is_fallback: false,
  is_required: false
})

const credentialCacheTtl = Duration.seconds(5)

const columns = "id, workspace_id, provider, name, label, disabled, sort_order, created_at"

export const layer = Layer.effect(
  ByokStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cipher = yield* CredentialCipher

    // The key id of each sealed secret (`v1.<key id>.…`).
    const keyIdOf = sql.onDialectOrElse({
      pg: () => sql`split_part(secret, '.', 2)`,
      orElse: () => sql`substr(secret, 4, instr(substr(secret, 4), '.') - 1)`
    })
    const foreign = yield* sql<{ key_id: string }>`SELECT DISTINCT ${keyIdOf} AS key_id FROM byok_credentials`.pipe(fromSqlError("byok"))
    if (foreign.some((r) => r.key_id !== cipher.keyId)) {
      return yield* new CredentialKeyMismatch({
        message: "The store holds BYOK credentials sealed with another secret key. Start every replica with the same " +
          "SWITCHYARD_SECRET_KEY as the process that stored them."
      })
    }

    const inWorkspaces = (workspaceIds: ReadonlyArray<string>) =>
      workspaceIds.length === 0 ? sql`FALSE` : sql`workspace_id IN ${sql.in(workspaceIds)}`

    // Every embeddings request asks for each serving provider's credential; most answers are
    // "none". Kept a few seconds per workspace and provider, forgotten by this process's writes.
    const credentials = yield* Cache.make({
      capacity: 10_000,
      timeToLive: credentialCacheTtl,
      lookup: (key: string) => {
        const [workspaceId, providerSlug] = key.split("|") as [string, string]
        return sql<{ id: string; secret: string }>`SELECT id, secret FROM byok_credentials
          WHERE workspace_id = ${workspaceId} AND provider = ${providerSlug} AND NOT disabled
          ORDER BY sort_order, created_at, id LIMIT 1`.pipe(
          fromSqlError("byok"),
          Effect.flatMap((rows) => {
            const row = rows[0]
            if (row === undefined) return Effect.succeed(Option.none<Redacted.Redacted<string>>())
            const opened = cipher.open(row.secret, aad(row.id, workspaceId, providerSlug))
            if (Option.isSome(opened)) return Effect.succeed(opened)
            return Effect.logError(
              "a stored provider credential cannot be decrypted with this process's secret key: every replica must run with " +
                "the SWITCHYARD_SECRET_KEY of the process that stored it"
            ).pipe(
              Effect.annotateLogs({ credential_id: row.id, workspace_id: workspaceId, provider: providerSlug }),
              Effect.andThen(Effect.fail(new CredentialUnreadable({ provider: providerSlug })))
            )
          })
        )
      }
    })
    const forgetWorkspace = (workspaceId: string) =>
      Cache.keys(credentials).pipe(
        Effect.flatMap((keys) =>
          Effect.forEach(
            [...keys].filter((key) => key.startsWith(`${workspaceId}|`)),
            (key) => Cache.invalidate(credentials, key),
            { discard: true }
          )
        )
      )
    const byId = (id: string, workspaceIds: ReadonlyArray<string>) =>
      sql<CredentialRow>`SELECT ${sql.unsafe(columns)} FROM byok_credentials WHERE id = ${id} AND ${inWorkspaces(workspaceIds)}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toKey)),
        fromSqlError("byok")
      )

    return ByokStore.of({
      credentialFor: (workspaceId, providerSlug) =>
        Cache.get(credentials, `${workspaceId}|${providerSlug}`).pipe(Span.within("ByokStore.credentialFor")),
      list: (request) =>
        Effect.gen(function*() {
          const provider = request.provider === undefined ? sql`TRUE` : sql`provider = ${request.provider}`
          const rows = yield* sql<CredentialRow>`SELECT ${sql.unsafe(columns)} FROM byok_credentials
            WHERE ${inWorkspaces(request.workspaceIds)} AND ${provider}
            ORDER BY workspace_id, provider, sort_order, created_at, id
            LIMIT ${request.limit} OFFSET ${request.offset}`.pipe(fromSqlError("byok"))
          const counted = yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM byok_credentials
            WHERE ${inWorkspaces(request.workspaceIds)} AND ${provider}`.pipe(fromSqlError("byok"))
          return { data: rows.map(toKey), total: counted[0]?.n ?? 0 }
        }),
      get: byId,
      create: (request) =>
        Effect.gen(function*() {
          const id = Crypto.randomUUID()
          const secret = cipher.seal(request.secret, aad(id, request.workspaceId, request.provider))
          yield* sql`INSERT INTO byok_credentials (id, workspace_id, provider, name, label, secret, disabled, sort_order, created_at)
            VALUES (${id}, ${request.workspaceId}, ${request.provider}, ${request.name}, ${labelOf(Redacted.value(request.secret))},
              ${secret}, ${request.disabled},
              (SELECT COALESCE(MAX(sort_order) + 1, 0) FROM byok_credentials
                WHERE workspace_id = ${request.workspaceId} AND provider = ${request.provider}),
              ${request.now})`.pipe(fromSqlError("byok"), Effect.ensuring(forgetWorkspace(request.workspaceId)))
          return Option.getOrThrow(yield* byId(id, [request.workspaceId]))
        }),
      update: (id, workspaceIds, patch) =>
        Effect.gen(function*() {
          const found = yield* sql<{ workspace_id: string; provider: string }>`SELECT workspace_id, provider FROM byok_credentials
            WHERE id = ${id} AND ${inWorkspaces(workspaceIds)}`.pipe(fromSqlError("byok"))
          const row = found[0]
          if (row === undefined) return Option.none()
          const changes: Record<string, unknown> = {
            updated_at: patch.now,
            ...(patch.name !== undefined ? { name: patch.name } : {}),
            ...(patch.disabled !== undefined ? { disabled: patch.disabled } : {}),
            ...(patch.secret !== undefined
              ? {
                secret: cipher.seal(patch.secret, aad(id, row.workspace_id, row.provider)),
                label: labelOf(Redacted.value(patch.secret))
              }
              : {})
          }
          yield* sql`UPDATE byok_credentials SET ${sql.update(changes)} WHERE id = ${id}`.pipe(
            fromSqlError("byok"),
            Effect.ensuring(forgetWorkspace(row.workspace_id))
          )
          return yield* byId(id, workspaceIds)
        }),
      remove: (id, workspaceIds) =>
        sql<{ id: string; workspace_id: string }>`DELETE FROM byok_credentials WHERE id = ${id} AND ${inWorkspaces(workspaceIds)}
          RETURNING id, workspace_id`.pipe(
          fromSqlError("byok"),
          Effect.tap((rows) => Effect.forEach(rows, (row) => forgetWorkspace(row.workspace_id), { discard: true })),
          Effect.map((rows) => rows.length > 0)
        )
    })
  })
)
