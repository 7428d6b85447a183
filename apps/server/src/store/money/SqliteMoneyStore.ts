/**
 * The money store on SQLite: the steps of PostgreSQL's money functions (`MoneyFunctions`), in
 * TypeScript, each operation inside ONE `BEGIN IMMEDIATE` transaction. The write lock is taken at
 * its start, so every grant and flush sees and leaves the books whole, whichever worker process
 * (`SWITCHYARD_WORKERS`) sharing the file runs it; a flush is one transaction, one fsync, for its
 * whole batch.
 *
 * **Details**
 *
 * - Exact: money columns are read as `CAST(x AS text)` and parsed as `bigint`, and bound as
 *   `bigint`; never a JS number.
 * - The same outcomes as PostgreSQL: the same refusals in the same order (key, then its limit, the
 *   workspace's budgets, its prepaid credits), grants sized by core's `SpendLease.grantFrom`, the
 *   same fencing (a row whose lease is gone or carries another token is not written) and the same
 *   idempotence by generation id.
 * - Times are epoch milliseconds; a spend counter's day is its UTC date as `YYYY-MM-DD` text, the
 *   all-time row `-infinity` (both sort as PostgreSQL's dates do: `-infinity` before every day,
 *   `infinity` after). A lease row's fencing token is the next value of the one-row counter
 *   `holds_fence` (SQLite has no sequences), taken when the row is created.
 * - Statements are constant texts, so the client keeps each prepared: a flush runs one fence read
 *   per lease, one insert per row and one upsert per counter it moves, in process.
 * - Grants, hand-backs and flushes run on the client's direct statements (`SqliteClient.Direct`):
 *   bound and stepped at once, without the `SqlClient`'s per-statement machinery, inside one
 *   transaction holding the client's lock. The other operations go through the client.
 * - Process liveness is dated by the `Clock` of the layer that made the store.
 */
import * as FencedLease from "@switchyard/core/accounting/FencedLease"
import { refused } from "@switchyard/core/accounting/MoneyModel"
import * as SpendLease from "@switchyard/core/accounting/SpendLease"
import { Clock, Duration, Effect, Option } from "effect"
import type { SqlClient } from "effect/sql"
import * as SqliteClient from "../sqlite/SqliteClient.ts"
import { StoreStatements, Uncounted } from "../sql/StoreStatements.ts"
import type { CreditGrant, Flushed, GrantOutcome, GrantRequest, LedgerRow, MoneyStore } from "./MoneyStorePort.ts"

const maxBig = 9223372036854775807n

/** A money value as SQLite returns it under `CAST(x AS text)`. */
const big = (value: unknown): bigint => BigInt(value as string)

/** A time column's value (epoch milliseconds) as a number, `null` for none. */
const msOf = (value: unknown): number | null =>
  value === null || value === undefined ? null : typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : Date.parse(String(value))

const truthy = (value: unknown): boolean => value === true || value === 1 || value === 1n

/** The UTC day of an epoch-milliseconds time, as the spend counters date it. */
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** The all-time counter row's day. */
const allTime = "-infinity"

/**
 * The first and last day of a limit window (`daily`, `weekly` from Monday, `monthly`, else all
 * time) at `nowMs`, as `BETWEEN` bounds on the counters' days.
 */
const windowDays = (reset: string | null, nowMs: number): readonly [string, string] => {
  const now = new Date(nowMs)
  switch (reset) {
    case "daily":
      return [dayOf(nowMs), "infinity"]
    case "weekly":
      return [dayOf(nowMs - ((now.getUTCDay() + 6) % 7) * 86_400_000), "infinity"]
    case "monthly":
      return [`${dayOf(nowMs).slice(0, 7)}-01`, "infinity"]
    default:
      return [allTime, allTime]
  }
}

/** The ledger's columns a flush writes, and the row field each comes from. */
const ledgerColumns = [
  ["generation_id", (r: LedgerRow) => r.generation],
  ["key_id", (r: LedgerRow) => r.key],
  ["workspace_id", (r: LedgerRow) => r.workspace],
  ["model", (r: LedgerRow) => r.model],
  ["provider", (r: LedgerRow) => r.provider],
  ["prompt_tokens", (r: LedgerRow) => r.prompt_tokens],
  ["total_tokens", (r: LedgerRow) => r.total_tokens],
  ["cost_nanos", (r: LedgerRow) => BigInt(r.cost)],
  ["is_byok", (r: LedgerRow) => r.byok],
  ["created_at", (r: LedgerRow) => Date.parse(r.created)],
  ["latency_ms", (r: LedgerRow) => r.latency_ms],
  ["cached_items", (r: LedgerRow) => r.cached_items ?? 0],
  ["cached_tokens", (r: LedgerRow) => r.cached_tokens ?? 0],
  ["attempts", (r: LedgerRow) => r.attempts ?? null]
] as const

const insertText = `INSERT INTO ledger (${ledgerColumns.map(([c]) => c).join(", ")})
  VALUES (${ledgerColumns.map(() => "?").join(", ")})
  ON CONFLICT (generation_id) DO NOTHING RETURNING CAST(cost_nanos AS text) AS cost`

const sumOf = (rows: ReadonlyArray<{ readonly n: unknown }>) => big(rows[0]!.n)

/** What each scope (the key's limit, the workspace's budgets, its prepaid credits) still allows. */
const roomsOn = (q: SqliteClient.Direct["q"]) => {
  /** Creates the workspace's credit account (no credits, not prepaid) when it has none. */
  const openAccount = (workspaceId: string) =>
    q`INSERT INTO credit_accounts (workspace_id) VALUES (${workspaceId}) ON CONFLICT (workspace_id) DO NOTHING`

  /** What the key may still spend under its limit: the limit, less its window's counters, less its open holds but `exclude`. */
  const keyRoom = (keyId: string, limit: bigint, reset: string | null, includeByok: boolean, now: number, exclude: string) =>
    Effect.gen(function*() {
      const [from, to] = windowDays(reset, now)
      const spent = yield* q<{ n: unknown }>`SELECT CAST(COALESCE(SUM(spent_nanos + CASE WHEN ${includeByok} THEN byok_nanos ELSE 0 END), 0) AS text) AS n
        FROM key_spend WHERE key_id = ${keyId} AND day BETWEEN ${from} AND ${to}`
      const held = yield* q<{ n: unknown }>`SELECT CAST(COALESCE(SUM(amount_nanos), 0) AS text) AS n FROM holds
        WHERE key_id = ${keyId} AND expires_at > ${now} AND (NOT is_byok OR ${includeByok}) AND id <> ${exclude}`
      return limit - sumOf(spent) - sumOf(held)
    })

  /** The smallest room left under the workspace's budgets that count the request, or `undefined` for none. */
  const budgetRoom = (workspaceId: string, byok: boolean, now: number, exclude: string) =>
    Effect.gen(function*() {
      const budgets = yield* q<{ interval: string; limit_nanos: unknown }>`SELECT interval, CAST(limit_nanos AS text) AS limit_nanos
        FROM workspace_budgets WHERE workspace_id = ${workspaceId}`
      if (budgets.length === 0) return undefined
      const workspace = yield* q<{ include: unknown }>`SELECT include_byok_in_budgets AS include FROM workspaces WHERE id = ${workspaceId}`
      if (workspace.length === 0) return undefined
      const includeByok = truthy(workspace[0]!.include)
      if (byok && !includeByok) return undefined
      yield* openAccount(workspaceId)
      const held = sumOf(
        yield* q<{ n: unknown }>`SELECT CAST(COALESCE(SUM(amount_nanos), 0) AS text) AS n FROM holds
          WHERE workspace_id = ${workspaceId} AND expires_at > ${now} AND (NOT is_byok OR ${includeByok}) AND id <> ${exclude}`
      )
      let least: { interval: string; limit: bigint; room: bigint } | undefined
      for (const budget of budgets) {
        const [from, to] = windowDays(budget.interval, now)
        const spent = sumOf(
          yield* q<{ n: unknown }>`SELECT CAST(COALESCE(SUM(spent_nanos + CASE WHEN ${includeByok} THEN byok_nanos ELSE 0 END), 0) AS text) AS n
            FROM workspace_spend WHERE workspace_id = ${workspaceId} AND day BETWEEN ${from} AND ${to}`
        )
        const limit = big(budget.limit_nanos)
        const room = limit - spent - held
        if (least === undefined || room < least.room) least = { interval: budget.interval, limit, room }
      }
      return least
    })

  /** What the workspace's prepaid credits still allow, or the largest bigint when it has none. */
  const balanceRoom = (workspaceId: string, now: number, exclude: string) =>
    Effect.gen(function*() {
      const account = () =>
        q<{ credits: unknown; usage: unknown; prepaid: unknown }>`SELECT CAST(credits_nanos AS text) AS credits,
          CAST(usage_nanos AS text) AS usage, prepaid FROM credit_accounts WHERE workspace_id = ${workspaceId}`
      let rows = yield* account()
      if (rows.length === 0) {
        yield* openAccount(workspaceId)
        rows = yield* account()
      }
      const row = rows[0]!
      if (!truthy(row.prepaid)) return maxBig
      const held = sumOf(
        yield* q<{ n: unknown }>`SELECT CAST(COALESCE(SUM(amount_nanos), 0) AS text) AS n FROM holds
          WHERE workspace_id = ${workspaceId} AND expires_at > ${now} AND NOT is_byok AND id <> ${exclude}`
      )
      return big(row.credits) - big(row.usage) - held
    })

  /** What each scope counting a row of `cost` on the key still allows, every open hold counted (`undefined`: it does not count). */
  const roomsOf = (keyId: string, workspaceId: string, byok: boolean, now: number) =>
    Effect.gen(function*() {
      const keys = yield* q<Record<string, unknown>>`SELECT CAST(limit_nanos AS text) AS limit_nanos, limit_reset, include_byok_in_limit
        FROM api_keys WHERE id = ${keyId}`
      const key = keys[0]
      const includeByok = key !== undefined && truthy(key.include_byok_in_limit)
      const limited = key !== undefined && key.limit_nanos !== null && (!byok || includeByok)
      const keyLeft = limited ? yield* keyRoom(keyId, big(key.limit_nanos), key.limit_reset as string | null, includeByok, now, "") : undefined
      const budget = yield* budgetRoom(workspaceId, byok, now, "")
      const balance = byok ? maxBig : yield* balanceRoom(workspaceId, now, "")
      return [keyLeft, budget?.room, balance < maxBig ? balance : undefined]
    })

  return { openAccount, keyRoom, budgetRoom, balanceRoom, roomsOf }
}

/** Writes rows into the ledger and adds their cost to the counters, each under its lease's current token. */
const flushOn = (direct: SqliteClient.Direct, roomsOf: ReturnType<typeof roomsOn>["roomsOf"], nowMs: () => number) => {
  const { q } = direct
  const insertLedger = direct.unsafe
  const costOf = (generation: string) =>
    q<{ cost: unknown }>`SELECT CAST(cost_nanos AS text) AS cost FROM ledger WHERE generation_id = ${generation}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? null : big(rows[0].cost)))
    )

  /** Adds a written row's cost to its key's and workspace's counters and the workspace's usage, now. */
  const charge = (row: LedgerRow, cost: bigint) =>
    Effect.gen(function*() {
      if (cost === 0n) return
      const createdMs = Date.parse(row.created)
      const spent = row.byok ? 0n : cost
      const byok = row.byok ? cost : 0n
      for (const day of [dayOf(createdMs), allTime]) {
        yield* q`INSERT INTO key_spend (key_id, day, spent_nanos, byok_nanos) VALUES (${row.key}, ${day}, ${spent}, ${byok})
          ON CONFLICT (key_id, day) DO UPDATE
            SET spent_nanos = key_spend.spent_nanos + excluded.spent_nanos, byok_nanos = key_spend.byok_nanos + excluded.byok_nanos`
        yield* q`INSERT INTO workspace_spend (workspace_id, day, spent_nanos, byok_nanos) VALUES (${row.workspace}, ${day}, ${spent}, ${byok})
          ON CONFLICT (workspace_id, day) DO UPDATE
            SET spent_nanos = workspace_spend.spent_nanos + excluded.spent_nanos, byok_nanos = workspace_spend.byok_nanos + excluded.byok_nanos`
      }
      if (!row.byok) {
        yield* q`INSERT INTO credit_accounts (workspace_id, usage_nanos, updated_at) VALUES (${row.workspace}, ${cost}, ${createdMs})
          ON CONFLICT (workspace_id) DO UPDATE
            SET usage_nanos = credit_accounts.usage_nanos + excluded.usage_nanos, updated_at = excluded.updated_at`
      }
    })

  return (rows: ReadonlyArray<LedgerRow>, expiresAtMs: number) =>
    direct.transaction(Effect.gen(function*() {
      // Each lease's token as the store has it now (`null`: gone).
      const fences = new Map<string, string | null>()
      for (const row of rows) {
        if (row.lease === null || fences.has(row.lease)) continue
        const found = yield* q<{ fence: unknown }>`SELECT CAST(fence AS text) AS fence FROM holds WHERE id = ${row.lease}`
        fences.set(row.lease, found[0] === undefined ? null : String(found[0].fence))
      }
      const out: Array<Flushed> = []
      const keyDays = new Map<string, { key: string; day: string; spent: bigint; byok: bigint }>()
      const workspaceDays = new Map<string, { workspace: string; day: string; spent: bigint; byok: bigint }>()
      const usage = new Map<string, { nanos: bigint; updatedMs: number }>()
      const leases = new Map<string, bigint>()
      for (const row of rows) {
        // Written only under its lease's current token (a row without one, like a lease gone, is not: PostgreSQL's NULL = NULL).
        const stored = row.lease === null ? undefined : fences.get(row.lease)
        if (row.lease !== null && (stored === null || stored !== row.fence)) {
          // Its lease moved (swept, taken over, fenced by a newer token) after the upstream was
          // paid: settled now under the key's current room, refused only past a limit (core's rule).
          const before = yield* costOf(row.generation)
          const fits = before === null &&
            FencedLease.settlesMoved(BigInt(row.cost), yield* roomsOf(row.key, row.workspace, row.byok, nowMs()))
          const inserted = fits ? yield* insertLedger<{ cost: unknown }>(insertText, ledgerColumns.map(([, value]) => value(row))) : []
          if (inserted.length > 0) yield* charge(row, big(inserted[0]!.cost))
          out.push({ generation: row.generation, cost: inserted.length > 0 ? big(inserted[0]!.cost) : before, written: inserted.length > 0, fenced: true })
          continue
        }
        const inserted = yield* insertLedger<{ cost: unknown }>(insertText, ledgerColumns.map(([, value]) => value(row)))
        if (inserted.length === 0) {
          out.push({ generation: row.generation, cost: yield* costOf(row.generation), written: false, fenced: false })
          continue
        }
        const cost = big(inserted[0]!.cost)
        out.push({ generation: row.generation, cost, written: true, fenced: false })
        if (row.lease !== null) leases.set(row.lease, (leases.get(row.lease) ?? 0n) + cost)
        if (cost === 0n) continue
        const createdMs = Date.parse(row.created)
        for (const day of [dayOf(createdMs), allTime]) {
          const k = keyDays.get(`${row.key}|${day}`) ?? { key: row.key, day, spent: 0n, byok: 0n }
          const w = workspaceDays.get(`${row.workspace}|${day}`) ?? { workspace: row.workspace, day, spent: 0n, byok: 0n }
          if (row.byok) {
            k.byok += cost
            w.byok += cost
          } else {
            k.spent += cost
            w.spent += cost
          }
          keyDays.set(`${row.key}|${day}`, k)
          workspaceDays.set(`${row.workspace}|${day}`, w)
        }
        if (!row.byok) {
          const u = usage.get(row.workspace)
          usage.set(row.workspace, { nanos: (u?.nanos ?? 0n) + cost, updatedMs: Math.max(u?.updatedMs ?? createdMs, createdMs) })
        }
      }
      for (const k of keyDays.values()) {
        yield* q`INSERT INTO key_spend (key_id, day, spent_nanos, byok_nanos) VALUES (${k.key}, ${k.day}, ${k.spent}, ${k.byok})
          ON CONFLICT (key_id, day) DO UPDATE
            SET spent_nanos = key_spend.spent_nanos + excluded.spent_nanos, byok_nanos = key_spend.byok_nanos + excluded.byok_nanos`
      }
      for (const w of workspaceDays.values()) {
        yield* q`INSERT INTO workspace_spend (workspace_id, day, spent_nanos, byok_nanos) VALUES (${w.workspace}, ${w.day}, ${w.spent}, ${w.byok})
          ON CONFLICT (workspace_id, day) DO UPDATE
            SET spent_nanos = workspace_spend.spent_nanos + excluded.spent_nanos, byok_nanos = workspace_spend.byok_nanos + excluded.byok_nanos`
      }
      for (const [workspace, u] of usage) {
        yield* q`INSERT INTO credit_accounts (workspace_id, usage_nanos, updated_at) VALUES (${workspace}, ${u.nanos}, ${u.updatedMs})
          ON CONFLICT (workspace_id) DO UPDATE
            SET usage_nanos = credit_accounts.usage_nanos + excluded.usage_nanos, updated_at = excluded.updated_at`
      }
      for (const [lease, spent] of leases) {
        yield* q`UPDATE holds SET amount_nanos = max(amount_nanos - ${spent}, 0), expires_at = max(expires_at, ${expiresAtMs})
          WHERE id = ${lease}`
      }
      return out
  }))
}

/** The gateway processes' heartbeats, and the holds of those gone. */
const processesOn = (sql: SqlClient.SqlClient, nowMs: () => number) =>
  ({
    // The time is read when the heartbeat runs, not when it is built (it is built once and
    // repeated), and `seen_at` only moves forward: a live process never looks older than it is.
    heartbeat: (id) =>
      Effect.suspend(() => {
        const seen = nowMs()
        return sql`INSERT INTO gateway_processes (id, started_at, seen_at) VALUES (${id}, ${seen}, ${seen})
          ON CONFLICT (id) DO UPDATE SET seen_at = max(gateway_processes.seen_at, excluded.seen_at)`.pipe(Effect.asVoid)
      }),
    sweep: (self, staleAfter) =>
      sql.withTransaction(Effect.gen(function*() {
        const since = nowMs() - Duration.toMillis(staleAfter)
        yield* sql`DELETE FROM gateway_processes WHERE id <> ${self} AND seen_at < ${since}`
        const holds = yield* sql<{ id: string }>`DELETE FROM holds
          WHERE owner IS NOT NULL AND owner <> ${self} AND NOT EXISTS (
            SELECT 1 FROM gateway_processes p WHERE p.id = holds.owner AND p.seen_at >= ${since})
          RETURNING id`
        return holds.length
      })),
    claim: (self) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`DELETE FROM holds WHERE owner IS NOT ${self}`
        yield* sql`DELETE FROM gateway_processes WHERE id <> ${self}`
      })),
    end: (self) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`DELETE FROM holds WHERE owner = ${self}`
        yield* sql`DELETE FROM gateway_processes WHERE id = ${self}`
      })),
    live: (staleAfter) =>
      Effect.suspend(() =>
        sql<{ n: unknown }>`SELECT count(*) AS n FROM gateway_processes WHERE seen_at >= ${nowMs() - Duration.toMillis(staleAfter)}`
      ).pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0)))
}) satisfies MoneyStore["processes"]

export const make = (sql: SqlClient.SqlClient): Effect.Effect<MoneyStore> =>
  Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const counter = yield* Effect.serviceOption(StoreStatements)
    /**
     * An operation counted once, under the kind of the PostgreSQL function it stands for, and its
     * statements not one by one: the store's figures mean the same on both dialects.
     */
    const operation = (kind: string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.suspend(() => {
        if (Option.isSome(counter)) counter.value.count(kind)
        return Effect.provideService(self, Uncounted, true)
      })
    const nowMs = () => clock.currentTimeMillisUnsafe()

    const direct = SqliteClient.directOf(sql)
    if (direct === undefined) return yield* Effect.die(new Error("the SQLite money store needs the embedded store's own client (SqliteClient)"))
    const { q } = direct
    const { keyRoom, budgetRoom, balanceRoom, roomsOf } = roomsOn(q)
    const flushRows = flushOn(direct, roomsOf, nowMs)

    const grant = (r: GrantRequest) =>
      operation("lease")(direct.transaction(Effect.gen(function*() {
        const now = r.nowMs
        const keys = yield* q<Record<string, unknown>>`SELECT workspace_id, CAST(limit_nanos AS text) AS limit_nanos, limit_reset,
            include_byok_in_limit, disabled, deleted_at, expires_at
          FROM api_keys WHERE id = ${r.keyId}`
        const key = keys[0]
        if (key === undefined || key.deleted_at !== null) return refused("key_deleted")
        if (truthy(key.disabled)) return refused("key_disabled")
        const keyExpires = msOf(key.expires_at)
        if (keyExpires !== null && keyExpires <= now) return refused("key_expired")
        if (key.workspace_id !== r.workspaceId) return refused("wrong_workspace")
        yield* q`DELETE FROM holds WHERE key_id = ${r.keyId} AND expires_at <= ${now} AND id <> ${r.id}`
        const own = yield* q<{ n: unknown }>`SELECT CAST(amount_nanos AS text) AS n FROM holds WHERE id = ${r.id}`
        const held = own.length === 0 ? 0n : sumOf(own)
        let avail = maxBig
        const includeByokInLimit = truthy(key.include_byok_in_limit)
        if (key.limit_nanos !== null && (!r.byok || includeByokInLimit)) {
          const limit = big(key.limit_nanos)
          const reset = key.limit_reset as string | null
          const room = (yield* keyRoom(r.keyId, limit, reset, includeByokInLimit, now, r.id)) - held
          if (r.ask.need > room) return refused("key_limit", { limit, reset, room })
          if (room < avail) avail = room
        }
        const budget = yield* budgetRoom(r.workspaceId, r.byok, now, r.id)
        if (budget !== undefined) {
          const room = budget.room - held
          if (r.ask.need > room) return refused("workspace_budget", { limit: budget.limit, reset: budget.interval, room })
          if (room < avail) avail = room
        }
        if (!r.byok) {
          const balance = yield* balanceRoom(r.workspaceId, now, r.id)
          if (balance < maxBig) {
            const room = balance - held
            if (r.ask.need > room) return refused("workspace_credits", { room })
            if (room < avail) avail = room
          }
        }
        // Every scope allows `need`: what the store grants is core's rule.
        const granted = SpendLease.grantFrom(avail, r.ask) ?? r.ask.need
        const seen = nowMs()
        yield* q`INSERT INTO gateway_processes (id, started_at, seen_at) VALUES (${r.owner}, ${seen}, ${seen})
          ON CONFLICT (id) DO UPDATE SET seen_at = max(gateway_processes.seen_at, excluded.seen_at)`
        let fence: string | null
        if (own.length === 0 && granted > 0n) {
          // A new row takes the next token: a lease taken and granted again never carries its old one.
          const next = yield* q<{ fence: unknown }>`UPDATE holds_fence SET value = value + 1 RETURNING CAST(value AS text) AS fence`
          fence = String(next[0]!.fence)
          yield* q`INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner, fence)
            VALUES (${r.id}, ${r.keyId}, ${r.workspaceId}, ${granted}, ${r.byok}, ${now}, ${r.expiresAtMs}, ${r.owner}, ${BigInt(fence)})`
        } else {
          const rows = yield* q<{ fence: unknown }>`UPDATE holds SET amount_nanos = amount_nanos + ${granted},
              expires_at = max(expires_at, ${r.expiresAtMs})
            WHERE id = ${r.id} RETURNING CAST(fence AS text) AS fence`
          fence = rows[0] === undefined ? null : String(rows[0].fence)
        }
        return { outcome: "ok", granted, limit: null, reset: null, room: avail - granted, fence } satisfies GrantOutcome
      })))

    const handBack = (id: string, amount: bigint) =>
      operation("lease_return")(direct.transaction(Effect.gen(function*() {
        const ended = yield* q`DELETE FROM holds WHERE id = ${id} AND amount_nanos <= ${amount} RETURNING id`
        if (ended.length === 0) yield* q`UPDATE holds SET amount_nanos = amount_nanos - ${amount} WHERE id = ${id}`
      })))

    const end = (id: string, fence: string) => sql`DELETE FROM holds WHERE id = ${id} AND fence = ${BigInt(fence)}`.pipe(Effect.asVoid)

    const readLease = (id: string) =>
      sql<{ amount: unknown; fence: unknown }>`SELECT CAST(amount_nanos AS text) AS amount, CAST(fence AS text) AS fence
        FROM holds WHERE id = ${id}`.pipe(
        Effect.map((rows) => {
          const row = rows[0]
          return row === undefined ? undefined : { amount: big(row.amount), fence: String(row.fence) }
        })
      )

    const flush = (rows: ReadonlyArray<LedgerRow>, expiresAtMs: number) => operation("flush")(flushRows(rows, expiresAtMs))

    // In a transaction: its write lock waits for any flush under way, in this process or another.
    const written = (rows: ReadonlyArray<LedgerRow>) =>
      sql.withTransaction(
        sql<{ generation_id: string; cost: unknown }>`SELECT generation_id, CAST(cost_nanos AS text) AS cost FROM ledger
          WHERE generation_id IN ${sql.in(rows.map((r) => r.generation))}`
      ).pipe(Effect.map((found) => new Map(found.map((r) => [r.generation_id, big(r.cost)]))))

    const credits = (workspaceId: string, now: number) =>
      sql<{ credits: unknown; usage: unknown; held: unknown }>`SELECT
          CAST(COALESCE((SELECT credits_nanos FROM credit_accounts WHERE workspace_id = ${workspaceId}), 0) AS text) AS credits,
          CAST(COALESCE((SELECT usage_nanos FROM credit_accounts WHERE workspace_id = ${workspaceId}), 0) AS text) AS usage,
          CAST((SELECT COALESCE(SUM(amount_nanos), 0) FROM holds
            WHERE workspace_id = ${workspaceId} AND expires_at > ${now} AND NOT is_byok) AS text) AS held`.pipe(
        Effect.map((rows) => ({ credits: big(rows[0]!.credits), usage: big(rows[0]!.usage), held: big(rows[0]!.held) }))
      )

    const addCredits = (g: CreditGrant) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO credit_grants (id, workspace_id, amount_nanos, note, granted_by_key_id, created_at)
          VALUES (${g.id}, ${g.workspaceId}, ${g.amountNanos}, ${g.note}, ${g.grantedByKeyId}, ${g.nowMs})`
        // A grant turns the workspace's prepaid credits on.
        yield* sql`INSERT INTO credit_accounts (workspace_id, credits_nanos, updated_at, prepaid)
          VALUES (${g.workspaceId}, ${g.amountNanos}, ${g.nowMs}, 1)
          ON CONFLICT (workspace_id) DO UPDATE
            SET credits_nanos = credit_accounts.credits_nanos + excluded.credits_nanos, updated_at = excluded.updated_at, prepaid = 1`
      }))

    const processes = processesOn(sql, nowMs)

    return { dialect: "sqlite", grant, handBack, end, readLease, flush, written, credits, addCredits, processes } satisfies MoneyStore
  })
