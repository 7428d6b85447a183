import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import { PaymentRequired, Unauthorized } from "@switchyard/core/errors/ApiError"
import type { LimitReset } from "@switchyard/core/schema/ApiKey"
import type { BudgetInterval } from "@switchyard/core/schema/Workspace"
import { Accounting } from "@switchyard/core/store/Accounting"
import type { AddCreditsRequest, CreditTotals, RecordRequest, Reservation, ReserveRequest, SettleRequest, Settlement } from "@switchyard/core/store/Accounting"
import { Clock, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type * as SqlError from "effect/sql/SqlError"
import * as Crypto from "node:crypto"
import * as GatewayProcesses from "./GatewayProcesses.ts"
import * as GroupCommit from "./GroupCommit.ts"

/** What `switchyard_reserve` answers: `ok`, or why the hold was refused. */
interface ReserveRow {
  readonly o_outcome: "ok" | "key_deleted" | "key_disabled" | "key_expired" | "wrong_workspace" | "key_limit" | "workspace_budget" | "workspace_credits"
  readonly o_limit: string | null
  readonly o_reset: LimitReset | BudgetInterval | null
  readonly o_room: string | null
}

/** What `switchyard_record` answers: `ok` (and whether the row was there), or why it was refused. */
interface RecordRow extends ReserveRow {
  readonly o_duplicate: boolean | null
}

/** What `switchyard_settle` answers. */
interface SettleRow {
  readonly o_cost: string
  readonly o_capped: boolean
  readonly o_duplicate: boolean
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

// The ledger row of a settle or a record: the same columns, whoever writes it.
const ledgerRow = (key: string, workspace: string, request: Omit<SettleRequest, "costNanos">, now: Date): GroupCommit.LedgerRow => ({
  key,
  workspace,
  generation: request.generationId,
  model: request.model,
  provider: request.provider,
  prompt_tokens: request.promptTokens,
  total_tokens: request.totalTokens,
  byok: request.isByok,
  now: now.toISOString(),
  latency_ms: request.latencyMs === undefined ? null : Math.max(0, Math.round(request.latencyMs)),
  cached_items: request.cachedItems ?? 0,
  cached_tokens: request.cachedTokens ?? 0
})

const windowNames: Record<LimitReset, string> = { daily: "today (UTC)", weekly: "this week (UTC, Monday to Sunday)", monthly: "this month (UTC)" }

export const defaultHoldTtl = Duration.minutes(10)

export interface AccountingOptions {
  readonly holdTtl?: Duration.Input
  /**
   * The gateway process the holds belong to (see `GatewayProcesses`); `null` (the default) leaves
   * them to expire after their TTL only. `layer` registers the process and passes its id.
   */
  readonly owner?: string | null
  /** Heartbeat and stale time of the process registration (`layer` only). */
  readonly process?: GatewayProcesses.GatewayProcessOptions
  /**
   * Group commit (`layer` only): concurrent operations share one statement. Default on, with
   * two batches in flight on PGlite (one runs while the other's commit is flushed) and four on
   * PostgreSQL; `false` sends each on its own.
   */
  readonly groupCommit?: Partial<GroupCommit.GroupCommitOptions> | false
  /** Where operations go; `layer` passes the group commit queue. Default: one statement each. */
  readonly submit?: (op: GroupCommit.BatchOp) => Effect.Effect<Record<string, unknown>, SqlError.SqlError>
}

/**
 * Runs one operation in its own statement: the function of its kind, or the hold's deletion.
 */
export const single = (sql: SqlClient.SqlClient) => (op: GroupCommit.BatchOp): Effect.Effect<Record<string, unknown>, SqlError.SqlError> => {
  switch (op.op) {
    case "reserve":
      return sql<ReserveRow>`SELECT * FROM switchyard_reserve(${op.id}, ${op.owner}, ${op.key}, ${op.workspace},
          ${op.amount}::bigint, ${op.byok}, ${op.now}::timestamptz, ${op.expires}::timestamptz)`.pipe(
        Effect.map((rows) => ({ ...rows[0]! }))
      )
    case "settle":
      return sql<SettleRow>`SELECT * FROM switchyard_settle(${op.id}, ${op.key}, ${op.generation}, ${op.model},
          ${op.provider}, ${op.prompt_tokens}::integer, ${op.total_tokens}::integer, ${op.cost}::bigint, ${op.byok},
          ${op.now}::timestamptz, ${op.latency_ms ?? null}::integer, ${op.cached_items ?? 0}::integer,
          ${op.cached_tokens ?? 0}::integer)`.pipe(Effect.map((rows) => ({ ...rows[0]! })))
    case "record":
      return sql<RecordRow>`SELECT * FROM switchyard_record(${op.key}, ${op.workspace}, ${op.generation}, ${op.model},
          ${op.provider}, ${op.prompt_tokens}::integer, ${op.total_tokens}::integer, ${op.byok}, ${op.now}::timestamptz,
          ${op.latency_ms}::integer, ${op.cached_items}::integer, ${op.cached_tokens}::integer)`.pipe(
        Effect.map((rows) => ({ ...rows[0]! }))
      )
    case "release":
      return sql`DELETE FROM holds WHERE id = ${op.id}`.pipe(Effect.as({}))
  }
}

export const make = (options: AccountingOptions = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const holdTtl = Duration.fromInputUnsafe(options.holdTtl ?? defaultHoldTtl)

    const nowOf = (now: Date | undefined) =>
      now !== undefined ? Effect.succeed(now) : Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const owner = options.owner ?? null
    const submit = options.submit ?? single(sql)

    const refusal = (request: Pick<ReserveRequest, "keyId" | "workspaceId" | "amountNanos">, row: ReserveRow): Effect.Effect<never, PaymentRequired | Unauthorized> => {
      switch (row.o_outcome) {
        case "key_deleted":
          return Effect.fail(new Unauthorized({ message: "This API key no longer exists" }))
        case "key_disabled":
          return Effect.fail(new Unauthorized({ message: "This API key is disabled" }))
        case "key_expired":
          return Effect.fail(new Unauthorized({ message: "This API key has expired" }))
        case "key_limit": {
          const limit = BigInt(row.o_limit!)
          const left = max(BigInt(row.o_room!), 0n)
          const window = row.o_reset === null ? "" : ` ${windowNames[row.o_reset as LimitReset]}`
          return Effect.fail(new PaymentRequired({
            message: `Insufficient key limit: this API key has ${dollars(left)} of its ${dollars(limit)} limit left${window}, and this request may cost up to ${dollars(request.amountNanos)}. Raise the key's limit with PATCH /api/v1/keys/{hash}.`,
            metadata: {
              reason: "key_limit",
              limit: creditsFromNanos(limit),
              limit_remaining: creditsFromNanos(left),
              limit_reset: row.o_reset,
              required: creditsFromNanos(request.amountNanos)
            }
          }))
        }
        case "workspace_budget": {
          const interval = row.o_reset as BudgetInterval
          const limit = BigInt(row.o_limit!)
          const left = max(BigInt(row.o_room!), 0n)
          return Effect.fail(new PaymentRequired({
            message: `Insufficient workspace budget: the workspace's ${interval} budget of ${dollars(limit)} has ${dollars(left)} left${interval === "lifetime" ? "" : ` ${windowNames[interval]}`}, and this request may cost up to ${dollars(request.amountNanos)}. Raise it with PUT /api/v1/workspaces/{id}/budgets/${interval}.`,
            metadata: {
              reason: "workspace_budget",
              budget: interval,
              limit: creditsFromNanos(limit),
              limit_remaining: creditsFromNanos(left),
              required: creditsFromNanos(request.amountNanos)
            }
          }))
        }
        case "workspace_credits": {
          const left = max(BigInt(row.o_room!), 0n)
          return Effect.fail(new PaymentRequired({
            message: `Insufficient workspace credits: the workspace has ${dollars(left)} available and this request may cost up to ${dollars(request.amountNanos)}. An operator can add credits with POST /api/v1/credits.`,
            metadata: {
              reason: "workspace_credits",
              balance: creditsFromNanos(left),
              required: creditsFromNanos(request.amountNanos)
            }
          }))
        }
        default:
          return Effect.die(new Error(`reserve: key ${request.keyId} is not in workspace ${request.workspaceId}`))
      }
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
      const row = (yield* submit({
        op: "reserve",
        id: reservation.id,
        owner,
        key: request.keyId,
        workspace: request.workspaceId,
        amount: request.amountNanos.toString(),
        byok: request.byok,
        now: now.toISOString(),
        expires: reservation.expiresAt.toISOString()
      }).pipe(Effect.orDie)) as unknown as ReserveRow
      if (row.o_outcome !== "ok") return yield* refusal(request, row)
      return reservation
    })

    const settle = Effect.fn("Accounting.settle")(function*(
      reservation: Reservation,
      request: SettleRequest
    ) {
      if (request.costNanos < 0n) return yield* Effect.die(new RangeError("settle: negative cost"))
      const now = yield* nowOf(request.now)
      const row = (yield* submit({
        op: "settle",
        id: reservation.id,
        cost: request.costNanos.toString(),
        ...ledgerRow(reservation.keyId, reservation.workspaceId, request, now)
      }).pipe(Effect.orDie)) as unknown as SettleRow
      return {
        generationId: request.generationId,
        costNanos: BigInt(row.o_cost),
        capped: row.o_capped,
        duplicate: row.o_duplicate
      } satisfies Settlement
    })

    const record = Effect.fn("Accounting.record")(function*(request: RecordRequest) {
      const now = yield* nowOf(request.now)
      const row = (yield* submit({
        op: "record",
        ...ledgerRow(request.keyId, request.workspaceId, request, now)
      }).pipe(Effect.orDie)) as unknown as RecordRow
      if (row.o_outcome !== "ok") return yield* refusal({ ...request, amountNanos: 0n }, row)
      return { generationId: request.generationId, costNanos: 0n, capped: false, duplicate: row.o_duplicate === true } satisfies Settlement
    })

    const release = (reservation: Reservation) =>
      reservation.amountNanos === 0n
        ? Effect.void
        : submit({ op: "release", id: reservation.id }).pipe(Effect.orDie, Effect.asVoid, Effect.withSpan("Accounting.release"))

    const sweepExpired = (at?: Date) =>
      Effect.gen(function*() {
        const now = yield* nowOf(at)
        // SKIP LOCKED: a hold being settled or released right now is left to that statement, and the
        // sweep never waits on (or deadlocks with) a reservation's locks.
        const rows = yield* sql<{ id: string }>`DELETE FROM holds WHERE id IN (
            SELECT id FROM holds WHERE expires_at <= ${now} FOR UPDATE SKIP LOCKED) RETURNING id`.pipe(Effect.orDie)
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
        // A grant turns the workspace's prepaid credits on (migration `0006_prepaid_credits`).
        yield* sql`INSERT INTO credit_accounts (workspace_id, credits_nanos, updated_at, prepaid)
          VALUES (${request.workspaceId}, ${request.amountNanos.toString()}::bigint, ${now}, true)
          ON CONFLICT (workspace_id) DO UPDATE
            SET credits_nanos = credit_accounts.credits_nanos + EXCLUDED.credits_nanos, updated_at = EXCLUDED.updated_at,
              prepaid = true`.pipe(Effect.orDie)
      })))
      return yield* credits(request.workspaceId, now)
    })

    yield* sweepExpired()

    return Accounting.of({ reserve, settle, record, release, sweepExpired, credits, addCredits })
  })

/**
 * The ledger, holds and credit accounts in SQL. `reserve` and `settle` are one statement each
 * (the `switchyard_reserve` and `switchyard_settle` functions of the `0004_spend_counters`
 * migration), counting a key's limit window from its per-day spend counters rather than the
 * ledger.
 *
 * Building it registers this gateway process (`GatewayProcesses.register`): its holds carry the
 * process's id, the holds of processes that died are deleted at start and, on PostgreSQL, within
 * about 40 s of their last heartbeat, and closing the layer deletes the process's own holds.
 * It also deletes the holds that expired. Concurrent reservations, settlements and releases are
 * group-committed (`GroupCommit`): those that arrive while a statement runs share the next one.
 */
export const layerWith = (options: AccountingOptions) =>
  Layer.effect(
    Accounting,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const owner = yield* GatewayProcesses.register(options.process)
      const submit = options.groupCommit === false ? undefined : yield* GroupCommit.make(sql, single(sql), {
        // Two on PGlite: one batch runs while the previous one's commit is flushed to disk.
        workers: options.groupCommit?.workers ?? (sql.driver === "pglite" ? 2 : 4),
        maxBatch: options.groupCommit?.maxBatch ?? 32
      })
      return yield* make({ ...options, owner, ...(submit === undefined ? {} : { submit }) })
    })
  )

export const layer = layerWith({})
