import { fromSqlError } from "@switchyard/core/store/StoreUnavailable"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import type { OwnKeyRequest } from "@switchyard/core/store/ApiKeyStore"
import { creditsFromNanos, startsAt } from "@switchyard/core/accounting/UsageWindow"
import type { ApiKeyRecord, KeyScope, LimitReset } from "@switchyard/core/schema/ApiKey"
import { Cache, Duration, Effect, Exit, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import * as Crypto from "node:crypto"
import { flag, type Flag, type Instant, instant, iso, isoOrNull } from "../sql/Columns.ts"
import { StoreChanges } from "../sql/StoreChanges.ts"

interface KeyRow {
  readonly id: string
  readonly hash: string
  readonly kind: "standard" | "management"
  readonly scope: KeyScope
  readonly name: string
  readonly label: string
  readonly user_id: string
  readonly workspace_id: string
  readonly disabled: Flag
  readonly limit_nanos: string | null
  readonly limit_reset: LimitReset | null
  readonly include_byok_in_limit: Flag
  readonly expires_at: Instant | null
  readonly external_user: string | null
  readonly created_at: Instant
  readonly updated_at: Instant | null
  readonly usage: string
  readonly usage_daily: string
  readonly usage_weekly: string
  readonly usage_monthly: string
  readonly usage_limit_window: string
  readonly byok_usage: string
  readonly byok_usage_daily: string
  readonly byok_usage_weekly: string
  readonly byok_usage_monthly: string
  readonly byok_usage_limit_window: string
}

const toRecord = (row: KeyRow): ApiKeyRecord => {
  const limit = row.limit_nanos === null ? null : BigInt(row.limit_nanos)
  const spent = BigInt(row.usage_limit_window) + (flag(row.include_byok_in_limit) ? BigInt(row.byok_usage_limit_window) : 0n)
  const remaining = limit === null ? null : limit - spent > 0n ? limit - spent : 0n
  return {
    hash: row.hash,
    name: row.name,
    label: row.label,
    disabled: flag(row.disabled),
    limit: limit === null ? null : creditsFromNanos(limit),
    limit_remaining: remaining === null ? null : creditsFromNanos(remaining),
    limit_reset: row.limit_reset,
    include_byok_in_limit: flag(row.include_byok_in_limit),
    usage: creditsFromNanos(BigInt(row.usage)),
    usage_daily: creditsFromNanos(BigInt(row.usage_daily)),
    usage_weekly: creditsFromNanos(BigInt(row.usage_weekly)),
    usage_monthly: creditsFromNanos(BigInt(row.usage_monthly)),
    byok_usage: creditsFromNanos(BigInt(row.byok_usage)),
    byok_usage_daily: creditsFromNanos(BigInt(row.byok_usage_daily)),
    byok_usage_weekly: creditsFromNanos(BigInt(row.byok_usage_weekly)),
    byok_usage_monthly: creditsFromNanos(BigInt(row.byok_usage_monthly)),
    created_at: iso(row.created_at),
    updated_at: isoOrNull(row.updated_at),
    expires_at: isoOrNull(row.expires_at),
    creator_user_id: row.user_id,
    external_user: row.external_user,
    workspace_id: row.workspace_id,
    kind: row.kind,
    // A standard key reaches its own workspace only, whatever its column says.
    scope: row.kind === "management" ? row.scope : "workspace"
  }
}

/**
 * The key columns plus every usage figure for the UTC windows of `now`, summed from the key's
 * spend counters (`key_spend`: one row per UTC day with spend, and the all-time row dated
 * `-infinity`), the counters its limit is checked against. They move in the statement that writes
 * the ledger rows and are never pruned, so the figures stay exact when old ledger rows are, and a
 * listing reads at most the rows of the windows' days, whatever the size of the ledger.
 */
const selectKeysWithUsage = (sql: SqlClient.SqlClient, now: Date) => {
  const w = startsAt(now)
  const day = (at: Date) => at.toISOString().slice(0, 10)
  const column = (byok: boolean) => (byok ? sql`s.byok_nanos` : sql`s.spent_nanos`)
  const sum = (byok: boolean, since: Date | undefined) =>
    since === undefined
      ? sql`CAST(COALESCE(SUM(CASE WHEN s.day = '-infinity' THEN ${column(byok)} ELSE 0 END), 0) AS text)`
      : sql`CAST(COALESCE(SUM(CASE WHEN s.day >= ${day(since)} THEN ${column(byok)} ELSE 0 END), 0) AS text)`
  const limitWindow = (byok: boolean) =>
    sql`CAST(COALESCE(SUM(CASE WHEN
      (k.limit_reset IS NULL AND s.day = '-infinity')
      OR (k.limit_reset = 'daily' AND s.day >= ${day(w.day)})
      OR (k.limit_reset = 'weekly' AND s.day >= ${day(w.week)})
      OR (k.limit_reset = 'monthly' AND s.day >= ${day(w.month)}) THEN ${column(byok)} ELSE 0 END), 0) AS text)`
  const earliest = day(w.week < w.month ? w.week : w.month)
  return sql`SELECT k.id, k.hash, k.kind, k.scope, k.name, k.label, k.user_id, k.workspace_id, k.disabled,
      CAST(k.limit_nanos AS text) AS limit_nanos, k.limit_reset, k.include_byok_in_limit, k.expires_at,
      k.external_user, k.created_at, k.updated_at,
      ${sum(false, undefined)} AS usage,
      ${sum(false, w.day)} AS usage_daily,
      ${sum(false, w.week)} AS usage_weekly,
      ${sum(false, w.month)} AS usage_monthly,
      ${limitWindow(false)} AS usage_limit_window,
      ${sum(true, undefined)} AS byok_usage,
      ${sum(true, w.day)} AS byok_usage_daily,
      ${sum(true, w.week)} AS byok_usage_weekly,
      ${sum(true, w.month)} AS byok_usage_monthly,
      ${limitWindow(true)} AS byok_usage_limit_window
    FROM api_keys k LEFT JOIN key_spend s ON s.key_id = k.id AND (s.day = '-infinity' OR s.day >= ${earliest})`
}


type FoundKey = Option.Option.Value<Effect.Success<ReturnType<ApiKeyStore["Service"]["findByHash"]>>>

// The bound within which a key disabled or deleted through another replica is refused here too.
const keyCacheTtl = Duration.seconds(1)

export const layer = Layer.effect(
  ApiKeyStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const one = (now: Date, where: Statement.Fragment) =>
      sql<KeyRow>`${selectKeysWithUsage(sql, now)} WHERE ${where} AND k.deleted_at IS NULL GROUP BY k.id`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => ({ row, record: toRecord(row) }))),
        fromSqlError("keys")
      )
    // Every request authenticates by hash: found keys are kept for a few seconds. This process
    // forgets a key the moment it updates or removes it; another replica's change is seen within
    // the time to live, and a priced request re-reads the key row when it reserves anyway. An
    // unknown hash is not kept: a key created a moment later must work at once.
    const found = yield* Cache.makeWith((hash: string) =>
      sql<{
        id: string
        hash: string
        kind: "standard" | "management"
        scope: KeyScope
        user_id: string
        workspace_id: string
        disabled: Flag
        expires_at: Instant | null
      }>`SELECT id, hash, kind, scope, user_id, workspace_id, disabled, expires_at FROM api_keys
        WHERE hash = ${hash} AND deleted_at IS NULL`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullishOr(rows[0]), (r): FoundKey => ({
            id: r.id,
            hash: r.hash,
            kind: r.kind,
            scope: r.kind === "management" ? r.scope : "workspace",
            userId: r.user_id,
            workspaceId: r.workspace_id,
            disabled: flag(r.disabled),
            expiresAt: r.expires_at === null ? null : instant(r.expires_at)
          }))
        ),
        fromSqlError("keys")
      ), {
      capacity: 10_000,
      timeToLive: (exit) => Exit.isSuccess(exit) && Option.isSome(exit.value) ? keyCacheTtl : Duration.zero
    })
    const changes = yield* StoreChanges
    // Another replica's change: every kept key is read again (changes to keys are rare).
    yield* changes.listen((change) => (change._tag === "Key" ? Cache.invalidateAll(found) : Effect.void))
    const forget = (hash: string, keyId: string) =>
      Effect.andThen(Cache.invalidate(found, hash), changes.changed({ _tag: "Key", keyId }))
    // A user reaches their own keys, and every key of a workspace they administer; a management
    // key of workspace scope, only those of its workspace.
    const reachable = (request: OwnKeyRequest, table = "api_keys") =>
      sql`(${sql(table)}.user_id = ${request.userId} OR ${sql(table)}.workspace_id IN
        (SELECT m.workspace_id FROM memberships m WHERE m.user_id = ${request.userId} AND m.role <> 'member'))
        AND (CAST(${request.workspaceId ?? null} AS text) IS NULL OR ${sql(table)}.workspace_id = ${request.workspaceId ?? null})`
    const own = (request: OwnKeyRequest) =>
      one(request.now, sql`k.hash = ${request.hash} AND ${reachable(request, "k")}`).pipe(Effect.map(Option.map((r) => r.record)))
    return ApiKeyStore.of({
      findByHash: (hash) => Cache.get(found, hash),
      list: (request) =>
        sql<KeyRow>`${selectKeysWithUsage(sql, request.now)}
          WHERE (CAST(${request.userId} AS text) IS NULL OR k.user_id = ${request.userId}) AND k.workspace_id = ${request.workspaceId}
            AND (${request.includeDisabled} OR NOT k.disabled) AND k.deleted_at IS NULL
          GROUP BY k.id
          ORDER BY k.seq
          LIMIT ${request.limit} OFFSET ${request.offset}`.pipe(
          Effect.map((rows) => rows.map(toRecord)),
          fromSqlError("keys")
        ),
      defaultWorkspaceOf: (userId) =>
        sql<{ default_workspace_id: string }>`SELECT default_workspace_id FROM users WHERE id = ${userId}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (r) => r.default_workspace_id)),
          fromSqlError("keys")
        ),
      isMember: (userId, workspaceId) =>
        sql<{ n: number }>`SELECT 1 AS n FROM memberships WHERE user_id = ${userId} AND workspace_id = ${workspaceId}`.pipe(
          Effect.map((rows) => rows.length > 0),
          fromSqlError("keys")
        ),
      roleIn: (userId, workspaceId) =>
        sql<{ role: string }>`SELECT role FROM memberships WHERE user_id = ${userId} AND workspace_id = ${workspaceId}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (r) => (r.role === "member" ? "member" as const : "admin" as const))),
          fromSqlError("keys")
        ),
      workspacesOf: (userId) =>
        sql<{ workspace_id: string }>`SELECT workspace_id FROM memberships WHERE user_id = ${userId} ORDER BY workspace_id`.pipe(
          Effect.map((rows) => rows.map((r) => r.workspace_id)),
          fromSqlError("keys")
        ),
      get: own,
      current: (keyId, now) =>
        Effect.gen(function*() {
          const found = yield* one(now, sql`k.id = ${keyId}`)
          if (Option.isNone(found)) return Option.none()
          const counted = yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM ledger
            WHERE key_id = ${keyId} AND cost_nanos = 0 AND created_at >= ${startsAt(now).day}`.pipe(fromSqlError("keys"))
          return Option.some({
            record: found.value.record,
            kind: found.value.row.kind,
            zeroCostRequestsToday: counted[0]?.n ?? 0
          })
        }),
      create: (request) =>
        Effect.gen(function*() {
          const id = Crypto.randomUUID()
          yield* sql`INSERT INTO api_keys (id, hash, kind, scope, name, label, user_id, workspace_id, limit_nanos, limit_reset,
              include_byok_in_limit, expires_at, external_user, created_at)
            VALUES (${id}, ${request.hash}, ${request.kind ?? "standard"}, ${request.scope ?? "user"}, ${request.name}, ${request.label}, ${request.userId}, ${request.workspaceId},
              CAST(${request.limitNanos === null ? null : request.limitNanos.toString()} AS bigint), ${request.limitReset},
              ${request.includeByokInLimit}, ${request.expiresAt}, ${request.externalUser}, ${request.now})`.pipe(fromSqlError("keys"))
          const created = yield* one(request.now, sql`k.id = ${id}`)
          return Option.getOrThrow(created).record
        }),
      update: (request) =>
        Effect.gen(function*() {
          const p = request.patch
          const changes: Record<string, unknown> = {
            updated_at: request.now,
            ...(p.name !== undefined ? { name: p.name } : {}),
            ...(p.disabled !== undefined ? { disabled: p.disabled } : {}),
            ...(p.limitNanos !== undefined ? { limit_nanos: p.limitNanos === null ? null : p.limitNanos.toString() } : {}),
            ...(p.limitReset !== undefined ? { limit_reset: p.limitReset } : {}),
            ...(p.includeByokInLimit !== undefined ? { include_byok_in_limit: p.includeByokInLimit } : {}),
            ...(p.expiresAt !== undefined ? { expires_at: p.expiresAt } : {})
          }
          const updated = yield* sql<{ id: string }>`UPDATE api_keys SET ${sql.update(changes)}
            WHERE hash = ${request.hash} AND ${reachable(request)} AND deleted_at IS NULL RETURNING id`.pipe(fromSqlError("keys"))
          yield* Effect.forEach(updated, (row) => forget(request.hash, row.id), { discard: true })
          if (updated.length === 0) return Option.none()
          return yield* own(request)
        }),
      remove: (request) =>
        sql<{ id: string }>`UPDATE api_keys SET deleted_at = ${request.now}, disabled = true, updated_at = ${request.now}
          WHERE hash = ${request.hash} AND ${reachable(request)} AND deleted_at IS NULL RETURNING id`.pipe(
          fromSqlError("keys"),
          Effect.tap((rows) => Effect.forEach(rows, (row) => forget(request.hash, row.id), { discard: true })),
          Effect.map((rows) => rows.length > 0)
        )
    })
  })
)
