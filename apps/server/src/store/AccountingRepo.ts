import { creditsFromNanos, limitWindowStart } from "@switchyard/core/accounting/UsageWindow"
import { PaymentRequired, Unauthorized } from "@switchyard/core/errors/ApiError"
import type { LimitReset } from "@switchyard/core/schema/ApiKey"
import { Accounting } from "@switchyard/core/store/Accounting"
import type { AddCreditsRequest, CreditTotals, Reservation, ReserveRequest, SettleRequest, Settlement } from "@switchyard/core/store/Accounting"
import { Clock, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type * as SqlError from "effect/sql/SqlError"
import * as Crypto from "node:crypto"

interface KeyRow {
  readonly workspace_id: string
  readonly limit_nanos: string | null
  readonly limit_reset: LimitReset | null
  readonly include_byok_in_limit: boolean
  readonly disabled: boolean
  readonly deleted_at: Date | string | null
  readonly expires_at: Date | string | null
}

const nanosPerCredit = 1_000_000_000n

/**
 * An exact dollar amount for messages: `$0.000123`, `$12.5`, `$0`.
 */
export const dollars = (nanos: bigint): string => {
  const abs = nanos < 0n ? -nanos : nanos
  const fraction = (abs % nanosPerCredit).toString().padStart(9, "0").replace(/0+$/u, "")
  return `${nanos < 0n ? "-" : ""}$${abs / nanosPerCredit}${fraction === "" ? "" : `.${fraction}`}`
}

const max = (a: bigint, b: bigint) => (a > b ? a : b)
const min = (a: bigint, b: bigint) => (a < b ? a : b)

const windowNames: Record<LimitReset, string> = { daily: "today (UTC)", weekly: "this week (UTC, Monday to Sunday)", monthly: "this month (UTC)" }

export const defaultHoldTtl = Duration.minutes(10)

export interface AccountingOptions {
  readonly holdTtl?: Duration.Input
}

export const make = (options: AccountingOptions = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const holdTtl = Duration.fromInputUnsafe(options.holdTtl ?? defaultHoldTtl)

    const nowOf = (now: Date | undefined) =>
      now !== undefined ? Effect.succeed(now) : Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const lockKey = (keyId: string) =>
      sql<KeyRow>`SELECT workspace_id, limit_nanos::text AS limit_nanos, limit_reset, include_byok_in_limit, disabled,
          deleted_at, expires_at
        FROM api_keys WHERE id = ${keyId} FOR NO KEY UPDATE`.pipe(Effect.orDie, Effect.map((rows) => rows[0]))

    const countsByok = (key: KeyRow) => key.include_byok_in_limit

    const keyRoom = (keyId: string, key: KeyRow, now: Date, excludeHold: string) =>
      Effect.gen(function*() {
        const since = limitWindowStart(key.limit_reset, now)
        const include = countsByok(key)
        const rows = yield* sql<{ spent: string; held: string }>`SELECT
            (SELECT COALESCE(SUM(cost_nanos), 0) FROM ledger
              WHERE key_id = ${keyId} AND (NOT is_byok OR ${include})
                AND ${since === undefined ? sql`TRUE` : sql`created_at >= ${since}`})::text AS spent,
            (SELECT COALESCE(SUM(amount_nanos), 0) FROM holds
              WHERE key_id = ${keyId} AND expires_at > ${now} AND (NOT is_byok OR ${include})
                AND id <> ${excludeHold})::text AS held`.pipe(Effect.orDie)
        const row = rows[0]!
        return BigInt(key.limit_nanos!) - BigInt(row.spent) - BigInt(row.held)
      })

    const lockAccount = (workspaceId: string) =>
      Effect.gen(function*() {
        const select = sql<{ credits: string; usage: string }>`SELECT credits_nanos::text AS credits, usage_nanos::text AS usage
          FROM credit_accounts WHERE workspace_id = ${workspaceId} FOR UPDATE`.pipe(Effect.orDie)
        const found = yield* select
        if (found.length > 0) return found[0]!
        yield* sql`INSERT INTO credit_accounts (workspace_id) VALUES (${workspaceId})
          ON CONFLICT (workspace_id) DO NOTHING`.pipe(Effect.orDie)
        return (yield* select)[0]!
      })

    const balanceRoom = (workspaceId: string, now: Date, excludeHold: string) =>
      Effect.gen(function*() {
        const account = yield* lockAccount(workspaceId)
        const rows = yield* sql<{ held: string }>`SELECT COALESCE(SUM(amount_nanos), 0)::text AS held FROM holds
          WHERE workspace_id = ${workspaceId} AND expires_at > ${now} AND NOT is_byok AND id <> ${excludeHold}`.pipe(Effect.orDie)
        return BigInt(account.credits) - BigInt(account.usage) - BigInt(rows[0]!.held)
      })

    const usableKey = (key: KeyRow | undefined, now: Date): Effect.Effect<KeyRow, Unauthorized> => {
      if (key === undefined || key.deleted_at !== null) return Effect.fail(new Unauthorized({ message: "This API key no longer exists" }))
      if (key.disabled) return Effect.fail(new Unauthorized({ message: "This API key is disabled" }))
      if (key.expires_at !== null && new Date(key.expires_at).getTime() <= now.getTime()) {
        return Effect.fail(new Unauthorized({ message: "This API key has expired" }))
      }
      return Effect.succeed(key)
    }

    const dieOnSql = <A, E, R>(self: Effect.Effect<A, E | SqlError.SqlError, R>) =>
      Effect.catchTag(self, "SqlError", (e) => Effect.die(e))

    const reserve = Effect.fn("Accounting.reserve")(function*(request: ReserveRequest) {
      if (request.amountNanos < 0n) return yield* Effect.die(new RangeError("reserve: negative amount"))
      const now = yield* nowOf(request.now)
      const ttl = request.ttl === undefined ? holdTtl : Duration.fromInputUnsafe(request.ttl)
      const reservation: Reservation = {
        id: Crypto.randomUUID(),
        keyId: request.keyId,
        workspaceId: request.workspaceId,
        amountNanos: request.amountNanos,
        byok: request.byok,
        expiresAt: new Date(now.getTime() + Duration.toMillis(ttl))
      }
      if (request.amountNanos === 0n) return reservation
      return yield* dieOnSql(sql.withTransaction(Effect.gen(function*() {
        const key = yield* Effect.flatMap(lockKey(request.keyId), (found) => usableKey(found, now))
        if (key.workspace_id !== request.workspaceId) {
          return yield* Effect.die(new Error(`reserve: key ${request.keyId} is not in workspace ${request.workspaceId}`))
        }
        yield* sql`DELETE FROM holds WHERE key_id = ${request.keyId} AND expires_at <= ${now}`.pipe(Effect.orDie)
        if (key.limit_nanos !== null && (!request.byok || countsByok(key))) {
          const room = yield* keyRoom(request.keyId, key, now, reservation.id)
          if (request.amountNanos > room) {
            const left = max(room, 0n)
            const window = key.limit_reset === null ? "" : ` ${windowNames[key.limit_reset]}`
            return yield* new PaymentRequired({
              message: `Insufficient key limit: this API key has ${dollars(left)} of its ${dollars(BigInt(key.limit_nanos))} limit left${window}, and this request may cost up to ${dollars(request.amountNanos)}. Raise the key's limit with PATCH /api/v1/keys/{hash}.`,
              metadata: {
                reason: "key_limit",
                limit: creditsFromNanos(BigInt(key.limit_nanos)),
                limit_remaining: creditsFromNanos(left),
                limit_reset: key.limit_reset,
                required: creditsFromNanos(request.amountNanos)
              }
            })
          }
        }
        if (!request.byok) {
          const room = yield* balanceRoom(request.workspaceId, now, reservation.id)
          if (request.amountNanos > room) {
            const left = max(room, 0n)
            return yield* new PaymentRequired({
              message: `Insufficient workspace credits: the workspace has ${dollars(left)} available and this request may cost up to ${dollars(request.amountNanos)}. An operator can add credits with POST /api/v1/credits.`,
              metadata: {
                reason: "workspace_credits",
                balance: creditsFromNanos(left),
                required: creditsFromNanos(request.amountNanos)
              }
            })
          }
        }
        yield* sql`INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at)
          VALUES (${reservation.id}, ${request.keyId}, ${request.workspaceId}, ${request.amountNanos.toString()}::bigint,
            ${request.byok}, ${now}, ${reservation.expiresAt})`.pipe(Effect.orDie)
        return reservation
      })))
    })

    const settle = Effect.fn("Accounting.settle")(function*(
      reservation: Reservation,
      request: SettleRequest
    ) {
      if (request.costNanos < 0n) return yield* Effect.die(new RangeError("settle: negative cost"))
      const now = yield* nowOf(request.now)
      return yield* dieOnSql(sql.withTransaction(Effect.gen(function*() {
        const key = yield* lockKey(reservation.keyId)
        if (key === undefined) return yield* Effect.die(new Error(`settle: no key ${reservation.keyId}`))
        const dropHold = sql`DELETE FROM holds WHERE id = ${reservation.id}`.pipe(Effect.orDie)
        const earlier = yield* sql<{ cost: string }>`SELECT cost_nanos::text AS cost FROM ledger
          WHERE generation_id = ${request.generationId}`.pipe(Effect.orDie)
        if (earlier.length > 0) {
          yield* dropHold
          return { generationId: request.generationId, costNanos: BigInt(earlier[0]!.cost), capped: false, duplicate: true } satisfies Settlement
        }
        const holds = yield* sql<{ amount: string; is_byok: boolean }>`SELECT amount_nanos::text AS amount, is_byok FROM holds
          WHERE id = ${reservation.id} AND expires_at > ${now}`.pipe(Effect.orDie)
        const hold = holds[0]
        const held = hold === undefined ? 0n : BigInt(hold.amount)
        let charged = request.costNanos
        if (charged > 0n && key.limit_nanos !== null && (!request.isByok || countsByok(key))) {
          const heldForLimit = hold !== undefined && (!hold.is_byok || countsByok(key)) ? held : 0n
          if (charged > heldForLimit) {
            charged = min(charged, max(heldForLimit, yield* keyRoom(reservation.keyId, key, now, reservation.id)))
          }
        }
        if (charged > 0n && !request.isByok) {
          const heldForBalance = hold !== undefined && !hold.is_byok ? held : 0n
          if (charged > heldForBalance) {
            charged = min(charged, max(heldForBalance, yield* balanceRoom(key.workspace_id, now, reservation.id)))
          } else {
            yield* lockAccount(key.workspace_id)
          }
        }
        yield* sql`INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens,
            cost_nanos, is_byok, created_at)
          VALUES (${request.generationId}, ${reservation.keyId}, ${key.workspace_id}, ${request.model}, ${request.provider},
            ${request.promptTokens}, ${request.totalTokens}, ${charged.toString()}::bigint, ${request.isByok}, ${now})`.pipe(Effect.orDie)
        if (charged > 0n && !request.isByok) {
          yield* sql`UPDATE credit_accounts SET usage_nanos = usage_nanos + ${charged.toString()}::bigint, updated_at = ${now}
            WHERE workspace_id = ${key.workspace_id}`.pipe(Effect.orDie)
        }
        yield* dropHold
        return { generationId: request.generationId, costNanos: charged, capped: charged < request.costNanos, duplicate: false } satisfies Settlement
      })))
    })

    const release = (reservation: Reservation) =>
      reservation.amountNanos === 0n
        ? Effect.void
        : sql`DELETE FROM holds WHERE id = ${reservation.id}`.pipe(Effect.orDie, Effect.asVoid, Effect.withSpan("Accounting.release"))

    const sweepExpired = (at?: Date) =>
      Effect.gen(function*() {
        const now = yield* nowOf(at)
        const rows = yield* sql<{ id: string }>`DELETE FROM holds WHERE expires_at <= ${now} RETURNING id`.pipe(Effect.orDie)
        return rows.length
      })

    const credits = (workspaceId: string, at?: Date) =>
      Effect.gen(function*() {
        const now = yield* nowOf(at)
        const rows = yield* sql<{ credits: string; usage: string; held: string }>`SELECT
            COALESCE((SELECT credits_nanos FROM credit_accounts WHERE workspace_id = ${workspaceId}), 0)::text AS credits,
            COALESCE((SELECT usage_nanos FROM credit_accounts WHERE workspace_id = ${workspaceId}), 0)::text AS usage,
            (SELECT COALESCE(SUM(amount_nanos), 0) FROM holds
              WHERE workspace_id = ${workspaceId} AND expires_at > ${now} AND NOT is_byok)::text AS held`.pipe(Effect.orDie)
        const row = rows[0]!
        return {
          workspaceId,
          totalCreditsNanos: BigInt(row.credits),
          totalUsageNanos: BigInt(row.usage),
          heldNanos: BigInt(row.held)
        } satisfies CreditTotals
      })

    const addCredits = Effect.fn("Accounting.addCredits")(function*(request: AddCreditsRequest) {
      if (request.amountNanos <= 0n) return yield* Effect.die(new RangeError("addCredits: amount must be positive"))
      const now = yield* nowOf(request.now)
      yield* dieOnSql(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO credit_grants (id, workspace_id, amount_nanos, note, granted_by_key_id, created_at)
          VALUES (${Crypto.randomUUID()}, ${request.workspaceId}, ${request.amountNanos.toString()}::bigint, ${request.note},
            ${request.grantedByKeyId}, ${now})`.pipe(Effect.orDie)
        yield* sql`INSERT INTO credit_accounts (workspace_id, credits_nanos, updated_at)
          VALUES (${request.workspaceId}, ${request.amountNanos.toString()}::bigint, ${now})
          ON CONFLICT (workspace_id) DO UPDATE
            SET credits_nanos = credit_accounts.credits_nanos + EXCLUDED.credits_nanos, updated_at = EXCLUDED.updated_at`.pipe(Effect.orDie)
      })))
      return yield* credits(request.workspaceId, now)
    })

    yield* sweepExpired()

    return Accounting.of({ reserve, settle, release, sweepExpired, credits, addCredits })
  })

/**
 * The ledger, holds and credit accounts in SQL. Building it deletes the holds that expired
 * (those of a process that died holding them).
 */
export const layerWith = (options: AccountingOptions) => Layer.effect(Accounting, make(options))

export const layer = layerWith({})
