/**
 * The money property suite's parts: a generator of sequences of money operations (grants,
 * flushes, hand-backs, ends, sweeps, heartbeats, clock steps; two or three processes; keys with
 * limits, workspaces with budgets and credits), one runner that plays a sequence on a target, and
 * the targets: core's reference model (`MoneyModel`) and a money store (SQLite or PostgreSQL).
 * Every target answers each operation and shows its books; the suite asserts they are the same.
 *
 * Fencing tokens are compared by order of first appearance (each store numbers them its own way).
 * PostgreSQL reads `now()` for process liveness and a moved row's settlement: its database gets a
 * `testclock.now()` that shadows `pg_catalog.now()` on the search path ({@link pgClockLayer}), so
 * one clock drives every target.
 */
import { PgClient } from "@effect/sql-pg"
import * as MoneyModel from "@switchyard/core/accounting/MoneyModel"
import type * as SpendLease from "@switchyard/core/accounting/SpendLease"
import { assert } from "@effect/vitest"
import { type Context, Duration, Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import { SqlClient as Sql } from "effect/sql"
import * as fc from "fast-check"
import * as Crypto from "node:crypto"
import * as Database from "../../src/store/database/Database.ts"
import { migrate } from "../../src/store/database/Migrations.ts"
import type { MoneyStore } from "../../src/store/money/MoneyStorePort.ts"
import { onClock } from "./MoneyStore.ts"
import { dropDatabase, freshDatabase } from "./TestServer.ts"

/** Money in the sequences is counted in units of this many nano-USD (limits and costs meet exactly). */
const U = 100n
const staleMs = 30_000

// ---------------------------------------------------------------------------------------------
// Sequences

export type Op =
  | {
    readonly op: "grant"
    readonly p: number
    readonly k: number
    readonly byok: boolean
    readonly need: number
    readonly extra: number
    readonly unit: number
    readonly edge: number
    readonly divisor: number
    readonly ttl: number
    readonly wrongWorkspace: boolean
  }
  | { readonly op: "flush"; readonly rows: ReadonlyArray<FlushRow>; readonly ttl: number }
  | { readonly op: "handBack"; readonly p: number; readonly k: number; readonly byok: boolean; readonly amount: number }
  | { readonly op: "end"; readonly p: number; readonly k: number; readonly byok: boolean }
  | { readonly op: "read"; readonly p: number; readonly k: number; readonly byok: boolean }
  | { readonly op: "credits"; readonly w: number }
  | { readonly op: "addCredits"; readonly w: number; readonly amount: number }
  | { readonly op: "heartbeat"; readonly p: number }
  | { readonly op: "sweep"; readonly p: number }
  | { readonly op: "live" }
  | { readonly op: "claim"; readonly p: number }
  | { readonly op: "endProcess"; readonly p: number }
  | { readonly op: "step"; readonly ms: number }

export interface FlushRow {
  readonly p: number
  readonly k: number
  readonly byok: boolean
  readonly cost: number
  /** The token the row carries: the lease's latest one seen, its first one, or no lease at all. */
  readonly fence: "latest" | "first" | "none"
  /** Reuses an earlier row's generation id (a retried flush), or `null` for a new one. */
  readonly repeat: number | null
  /** A lease an earlier grant answered (by index, `null`: the lease of `p`, `k`, `byok`): most rows come from a lease granted. */
  readonly from: number | null
}

export interface Scenario {
  readonly startMs: number
  readonly processes: number
  readonly workspaces: ReadonlyArray<{
    readonly includeByokInBudgets: boolean
    readonly budget: { readonly interval: string; readonly limit: number } | null
  }>
  readonly keys: ReadonlyArray<{
    readonly w: number
    readonly limit: number | null
    readonly reset: string | null
    readonly includeByokInLimit: boolean
  }>
  readonly ops: ReadonlyArray<Op>
}

const p = fc.integer({ min: 0, max: 2 })
const k = fc.integer({ min: 0, max: 2 })
const w = fc.integer({ min: 0, max: 1 })
const units = (max: number) => fc.integer({ min: 0, max })

const flushRow: fc.Arbitrary<FlushRow> = fc.record({
  p,
  k,
  byok: fc.boolean(),
  cost: units(6),
  fence: fc.constantFrom("latest" as const, "latest" as const, "latest" as const, "first" as const, "none" as const),
  repeat: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat({ max: 20 }) }),
  from: fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 3, arbitrary: fc.nat({ max: 20 }) })
})

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.record({
      op: fc.constant("grant" as const),
      p,
      k,
      byok: fc.boolean(),
      need: units(6),
      extra: units(12),
      unit: fc.constantFrom(1, 100),
      edge: units(8),
      divisor: fc.integer({ min: 1, max: 4 }),
      ttl: fc.constantFrom(20_000, 600_000),
      wrongWorkspace: fc.constant(false) // one grant in twenty: `anyOp`
    })
  },
  { weight: 5, arbitrary: fc.record({ op: fc.constant("flush" as const), rows: fc.array(flushRow, { minLength: 1, maxLength: 3 }), ttl: fc.constantFrom(20_000, 600_000) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("handBack" as const), p, k, byok: fc.boolean(), amount: units(6) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("end" as const), p, k, byok: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("read" as const), p, k, byok: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("credits" as const), w }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("addCredits" as const), w, amount: fc.integer({ min: 1, max: 30 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("heartbeat" as const), p }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("sweep" as const), p }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("live" as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("claim" as const), p }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("endProcess" as const), p }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("step" as const), ms: fc.constantFrom(1_000, 5_000, 20_000, 31_000, 45_000, 600_001) }) }
)

/** A grant now and then asks for a key in the other workspace. */
const anyOp: fc.Arbitrary<Op> = fc.tuple(op, fc.integer({ min: 0, max: 19 })).map(([o, n]) =>
  o.op === "grant" ? { ...o, wrongWorkspace: n === 0 } : o
)

/**
 * Sequences of up to `maxOps` operations on one to three keys in one or two workspaces, starting
 * at a time picked so that clock steps cross a day, a week or a month now and then.
 */
export const scenario = (maxOps = 14): fc.Arbitrary<Scenario> =>
  fc.record({
    startMs: fc.constantFrom(
      Date.parse("2030-05-14T10:00:00Z"),
      Date.parse("2030-06-30T23:59:30Z"), // the last day of a month, a Sunday: a step crosses the day, week and month
      Date.parse("2030-07-02T23:59:50Z")
    ),
    processes: fc.integer({ min: 2, max: 3 }),
    workspaces: fc.array(
      fc.record({
        includeByokInBudgets: fc.boolean(),
        budget: fc.option(fc.record({ interval: fc.constantFrom("daily", "weekly", "monthly", "lifetime"), limit: units(24) }), { freq: 2 })
      }),
      { minLength: 1, maxLength: 2 }
    ),
    keys: fc.array(
      fc.record({
        w,
        limit: fc.option(units(24), { freq: 3 }),
        reset: fc.constantFrom(null, "daily", "weekly", "monthly"),
        includeByokInLimit: fc.boolean()
      }),
      { minLength: 1, maxLength: 3 }
    ),
    ops: fc.array(anyOp, { minLength: 1, maxLength: maxOps })
  })

// ---------------------------------------------------------------------------------------------
// Targets

/** What a target answers to an operation, money as bigint. */
interface Target {
  readonly name: string
  readonly setTime: (ms: number) => Effect.Effect<void>
  readonly grant: (r: MoneyModel.Grant) => Effect.Effect<MoneyModel.GrantOutcome>
  readonly handBack: (id: string, amount: bigint) => Effect.Effect<void>
  readonly end: (id: string, fence: string) => Effect.Effect<void>
  readonly readLease: (id: string) => Effect.Effect<{ readonly amount: bigint; readonly fence: string } | undefined>
  readonly flush: (rows: ReadonlyArray<MoneyModel.Row>, expiresAtMs: number) => Effect.Effect<ReadonlyArray<MoneyModel.Flushed>>
  readonly credits: (workspace: string) => Effect.Effect<{ readonly credits: bigint; readonly usage: bigint; readonly held: bigint }>
  readonly addCredits: (workspace: string, amount: bigint) => Effect.Effect<void>
  readonly heartbeat: (id: string) => Effect.Effect<void>
  readonly sweep: (self: string) => Effect.Effect<number>
  readonly live: Effect.Effect<number>
  readonly claim: (self: string) => Effect.Effect<void>
  readonly endProcess: (self: string) => Effect.Effect<void>
  readonly books: (ids: Ids) => Effect.Effect<MoneyModel.Books>
}

/** The ids a sequence uses, the same on every target. */
interface Ids {
  readonly prefix: string
  readonly workspaces: ReadonlyArray<string>
  readonly keys: ReadonlyArray<MoneyModel.KeySpec>
  readonly workspaceSpecs: ReadonlyArray<MoneyModel.WorkspaceSpec>
}

const idsOf = (s: Scenario): Ids => {
  const prefix = `s${Crypto.randomUUID().slice(0, 8)}`
  const workspaces = s.workspaces.map((_, i) => `${prefix}-w${i}`)
  return {
    prefix,
    workspaces,
    workspaceSpecs: s.workspaces.map((spec, i) => ({
      id: workspaces[i]!,
      includeByokInBudgets: spec.includeByokInBudgets,
      budgets: spec.budget === null ? [] : [{ interval: spec.budget.interval, limit: BigInt(spec.budget.limit) * U }]
    })),
    keys: s.keys.map((spec, i) => ({
      id: `${prefix}-k${i}`,
      workspace: workspaces[spec.w % workspaces.length]!,
      limit: spec.limit === null ? null : BigInt(spec.limit) * U,
      reset: spec.reset,
      includeByokInLimit: spec.includeByokInLimit
    }))
  }
}

/** The reference model as a target. */
const modelTarget = (ids: Ids): Target => {
  const model = MoneyModel.make({ keys: ids.keys, workspaces: ids.workspaceSpecs })
  let now = 0
  return {
    name: "model",
    setTime: (ms) =>
      Effect.sync(() => {
        now = ms
      }),
    grant: (r) => Effect.sync(() => model.grant(r)),
    handBack: (id, amount) => Effect.sync(() => model.handBack(id, amount)),
    end: (id, fence) => Effect.sync(() => model.end(id, fence)),
    readLease: (id) => Effect.sync(() => model.readLease(id)),
    flush: (rows, expiresAtMs) => Effect.sync(() => model.flush(rows, expiresAtMs, now)),
    credits: (workspace) => Effect.sync(() => model.credits(workspace, now)),
    addCredits: (workspace, amount) => Effect.sync(() => model.addCredits(workspace, amount)),
    heartbeat: (id) => Effect.sync(() => model.processes.heartbeat(id, now)),
    sweep: (self) => Effect.sync(() => model.processes.sweep(self, staleMs, now)),
    live: Effect.sync(() => model.processes.live(staleMs, now)),
    claim: (self) => Effect.sync(() => model.processes.claim(self)),
    endProcess: (self) => Effect.sync(() => model.processes.end(self)),
    books: () => Effect.sync(() => model.books())
  }
}

const msOf = (value: unknown): number => (value instanceof Date ? value.getTime() : Number(value))
const truthy = (value: unknown): boolean => value === true || value === 1 || value === 1n

/**
 * Seeds a sequence's workspaces and keys, and empties the tables shared by every sequence
 * (holds, process rows): each sequence starts from a store with nothing held.
 */
const seed = (ids: Ids) =>
  Effect.gen(function*() {
    const sql = yield* Sql.SqlClient
    const sqlite = sql.onDialectOrElse({ sqlite: () => true, orElse: () => false })
    yield* sql`DELETE FROM holds`
    yield* sql`DELETE FROM gateway_processes`
    for (const ws of ids.workspaceSpecs) {
      const user = `${ws.id}-u`
      yield* sql`INSERT INTO workspaces (id, slug, name, include_byok_in_budgets) VALUES (${ws.id}, ${ws.id}, 'Property', ${ws.includeByokInBudgets})`
      yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES (${user}, 'tester', ${ws.id})`
      yield* sql`INSERT INTO memberships (user_id, workspace_id, role) VALUES (${user}, ${ws.id}, 'owner')`
      for (const budget of ws.budgets) {
        const at = sqlite ? Date.now() : new Date()
        yield* sql`INSERT INTO workspace_budgets (id, workspace_id, interval, limit_nanos, created_at, updated_at)
          VALUES (${`${ws.id}-${budget.interval}`}, ${ws.id}, ${budget.interval}, CAST(${budget.limit.toString()} AS bigint), ${at}, ${at})`
      }
    }
    for (const key of ids.keys) {
      yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id, limit_nanos, limit_reset, include_byok_in_limit)
        VALUES (${key.id}, ${`hash-${key.id}`}, 'standard', 'property key', 'sk-sy-v1-...', ${`${key.workspace}-u`}, ${key.workspace},
          CAST(${key.limit === null ? null : key.limit.toString()} AS bigint), ${key.reset}, ${key.includeByokInLimit})`
    }
  }).pipe(Effect.orDie)

/** The books of a sequence as a store has them (its keys' and workspaces' rows; every hold and process row). */
const storeBooks = (sql: SqlClient.SqlClient, ids: Ids) =>
  Effect.gen(function*() {
    const keys = ids.keys.map((k) => k.id)
    const ledger = yield* sql<{ generation_id: string; key_id: string; cost: string; is_byok: unknown }>`SELECT generation_id, key_id,
        CAST(cost_nanos AS text) AS cost, is_byok FROM ledger WHERE key_id IN ${sql.in(keys)}`
    const keySpend = yield* sql<{ key_id: string; day: string; spent: string; byok: string }>`SELECT key_id, CAST(day AS text) AS day,
        CAST(spent_nanos AS text) AS spent, CAST(byok_nanos AS text) AS byok FROM key_spend WHERE key_id IN ${sql.in(keys)}`
    const workspaceSpend = yield* sql<{ workspace_id: string; day: string; spent: string; byok: string }>`SELECT workspace_id,
        CAST(day AS text) AS day, CAST(spent_nanos AS text) AS spent, CAST(byok_nanos AS text) AS byok
      FROM workspace_spend WHERE workspace_id IN ${sql.in(ids.workspaces)}`
    const accounts = yield* sql<{ workspace_id: string; credits: string; usage: string; prepaid: unknown }>`SELECT workspace_id,
        CAST(credits_nanos AS text) AS credits, CAST(usage_nanos AS text) AS usage, prepaid
      FROM credit_accounts WHERE workspace_id IN ${sql.in(ids.workspaces)}`
    const holds = yield* sql<Record<string, unknown>>`SELECT id, key_id, workspace_id, CAST(amount_nanos AS text) AS amount, is_byok,
        expires_at, owner, CAST(fence AS text) AS fence FROM holds`
    const processes = yield* sql<{ id: string; seen_at: unknown }>`SELECT id, seen_at FROM gateway_processes`
    return {
      ledger: ledger.map((r) => ({ generation: r.generation_id, key: r.key_id, cost: BigInt(r.cost), byok: truthy(r.is_byok) })),
      keySpend: keySpend.map((r) => ({ key: r.key_id, day: r.day, spent: BigInt(r.spent), byok: BigInt(r.byok) })),
      workspaceSpend: workspaceSpend.map((r) => ({ workspace: r.workspace_id, day: r.day, spent: BigInt(r.spent), byok: BigInt(r.byok) })),
      accounts: accounts
        .map((r) => ({ workspace: r.workspace_id, credits: BigInt(r.credits), usage: BigInt(r.usage), prepaid: truthy(r.prepaid) }))
        .filter((a) => a.credits !== 0n || a.usage !== 0n || a.prepaid),
      holds: holds.map((r) => ({
        id: String(r.id),
        key: String(r.key_id),
        workspace: String(r.workspace_id),
        amount: BigInt(r.amount as string),
        byok: truthy(r.is_byok),
        expiresAtMs: msOf(r.expires_at),
        owner: String(r.owner),
        fence: String(r.fence)
      })),
      processes: processes.map((r) => ({ id: r.id, seenMs: msOf(r.seen_at) }))
    } satisfies MoneyModel.Books
  }).pipe(Effect.orDie)

const ledgerRow = (row: MoneyModel.Row) => ({
  generation: row.generation,
  key: row.key,
  workspace: row.workspace,
  model: "test/embed",
  provider: "test",
  prompt_tokens: 1,
  total_tokens: 1,
  cost: row.cost.toString(),
  byok: row.byok,
  created: new Date(row.createdMs).toISOString(),
  latency_ms: 5,
  cached_items: 0,
  cached_tokens: 0,
  attempts: null,
  lease: row.lease,
  fence: row.fence
})

/**
 * A money store as a target: `setTime` sets the clock the store reads (the Effect clock it was
 * made under on SQLite, `testclock` on PostgreSQL).
 */
const storeTarget = (
  name: string,
  store: MoneyStore,
  sql: SqlClient.SqlClient,
  setClock: (ms: number) => Effect.Effect<void>
): Target => {
  let now = 0
  const stale = Duration.millis(staleMs)
  return {
    name,
    setTime: (ms) =>
      Effect.andThen(
        Effect.sync(() => {
          now = ms
        }),
        setClock(ms)
      ),
    grant: (r) => Effect.orDie(store.grant(r)),
    handBack: (id, amount) => Effect.orDie(store.handBack(id, amount)),
    end: (id, fence) => Effect.orDie(store.end(id, fence)),
    readLease: (id) => Effect.orDie(store.readLease(id)),
    flush: (rows, expiresAtMs) => Effect.orDie(store.flush(rows.map(ledgerRow), expiresAtMs)),
    credits: (workspace) => Effect.orDie(store.credits(workspace, now)),
    addCredits: (workspace, amount) =>
      Effect.orDie(store.addCredits({ id: Crypto.randomUUID(), workspaceId: workspace, amountNanos: amount, note: null, grantedByKeyId: null, nowMs: now })),
    heartbeat: (id) => Effect.orDie(store.processes.heartbeat(id)),
    sweep: (self) => Effect.orDie(store.processes.sweep(self, stale)),
    live: Effect.orDie(Effect.suspend(() => store.processes.live(stale))),
    claim: (self) => Effect.orDie(store.processes.claim(self)),
    endProcess: (self) => Effect.orDie(store.processes.end(self)),
    books: (ids) => storeBooks(sql, ids)
  }
}

// ---------------------------------------------------------------------------------------------
// Playing a sequence

/** What a target answered to every operation, and its books at the end, tokens renamed by first appearance. */
interface Played {
  readonly answers: ReadonlyArray<unknown>
  readonly books: MoneyModel.Books
}

const sortBy = <A>(rows: ReadonlyArray<A>, keyOf: (a: A) => string) => [...rows].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0))

const play = (target: Target, s: Scenario, ids: Ids): Effect.Effect<Played> =>
  Effect.gen(function*() {
    let now = s.startMs
    yield* target.setTime(now)
    // Tokens as the target gives them, and their names by order of first appearance.
    const names = new Map<string, string>()
    const name = (fence: string | null) => {
      if (fence === null) return null
      if (!names.has(fence)) names.set(fence, `f${names.size + 1}`)
      return names.get(fence)!
    }
    const seenFences = new Map<string, Array<string>>()
    const saw = (lease: string, fence: string | null) => {
      if (fence === null) return
      const list = seenFences.get(lease) ?? []
      if (list.at(-1) !== fence) list.push(fence)
      seenFences.set(lease, list)
    }
    const owner = (p: number) => `${ids.prefix}-p${p % s.processes}`
    const keyOf = (k: number) => ids.keys[k % ids.keys.length]!
    const leaseOf = (p: number, k: number, byok: boolean) => `${ids.prefix}-l${p % s.processes}-${k % ids.keys.length}-${byok ? "b" : "n"}`
    const generations: Array<string> = []
    const grantedTo: Array<{ readonly p: number; readonly k: number; readonly byok: boolean }> = []
    const answers: Array<unknown> = []
    for (const [i, o] of s.ops.entries()) {
      switch (o.op) {
        case "grant": {
          const key = keyOf(o.k)
          const workspace = o.wrongWorkspace && ids.workspaces.length > 1 ? ids.workspaces.find((x) => x !== key.workspace)! : key.workspace
          const need = BigInt(o.need) * U
          const ask: SpendLease.Ask = {
            need,
            desired: need + BigInt(o.extra) * U,
            unit: BigInt(o.unit),
            edge: BigInt(o.edge) * U,
            divisor: BigInt(o.divisor)
          }
          const lease = leaseOf(o.p, o.k, o.byok)
          const out = yield* target.grant({
            id: lease,
            owner: owner(o.p),
            keyId: key.id,
            workspaceId: workspace,
            byok: o.byok,
            ask,
            nowMs: now,
            expiresAtMs: now + o.ttl
          })
          saw(lease, out.fence)
          if (out.outcome === "ok") grantedTo.push({ p: o.p, k: o.k, byok: o.byok })
          answers.push({ grant: { ...out, fence: name(out.fence) } })
          break
        }
        case "flush": {
          const rows: Array<MoneyModel.Row> = []
          for (const given of o.rows) {
            const r = given.from !== null && grantedTo.length > 0 ? { ...given, ...grantedTo[given.from % grantedTo.length]! } : given
            const key = keyOf(r.k)
            const lease = leaseOf(r.p, r.k, r.byok)
            const seen = seenFences.get(lease) ?? []
            const generation = r.repeat !== null && generations.length > 0
              ? generations[r.repeat % generations.length]!
              : `${ids.prefix}-g${i}-${rows.length}`
            if (rows.some((x) => x.generation === generation)) continue
            rows.push({
              generation,
              key: key.id,
              workspace: key.workspace,
              cost: BigInt(r.cost) * U,
              byok: r.byok,
              createdMs: now,
              lease: r.fence === "none" ? null : lease,
              fence: r.fence === "none" ? null : r.fence === "first" ? (seen[0] ?? null) : (seen.at(-1) ?? null)
            })
          }
          for (const row of rows) if (!generations.includes(row.generation)) generations.push(row.generation)
          answers.push({ flush: yield* target.flush(rows, now + o.ttl) })
          break
        }
        case "handBack":
          yield* target.handBack(leaseOf(o.p, o.k, o.byok), BigInt(o.amount) * U)
          answers.push("handBack")
          break
        case "end": {
          const lease = leaseOf(o.p, o.k, o.byok)
          const fence = seenFences.get(lease)?.at(-1)
          if (fence !== undefined) yield* target.end(lease, fence)
          answers.push("end")
          break
        }
        case "read": {
          const lease = leaseOf(o.p, o.k, o.byok)
          const out = yield* target.readLease(lease)
          if (out !== undefined) saw(lease, out.fence)
          answers.push({ read: out === undefined ? null : { amount: out.amount, fence: name(out.fence) } })
          break
        }
        case "credits":
          answers.push({ credits: yield* target.credits(ids.workspaces[o.w % ids.workspaces.length]!) })
          break
        case "addCredits":
          yield* target.addCredits(ids.workspaces[o.w % ids.workspaces.length]!, BigInt(o.amount) * U)
          answers.push("addCredits")
          break
        case "heartbeat":
          yield* target.heartbeat(owner(o.p))
          answers.push("heartbeat")
          break
        case "sweep":
          answers.push({ swept: yield* target.sweep(owner(o.p)) })
          break
        case "live":
          answers.push({ live: yield* target.live })
          break
        case "claim":
          yield* target.claim(owner(o.p))
          answers.push("claim")
          break
        case "endProcess":
          yield* target.endProcess(owner(o.p))
          answers.push("endProcess")
          break
        case "step":
          now += o.ms
          yield* target.setTime(now)
          answers.push("step")
          break
      }
    }
    const books = yield* target.books(ids)
    return {
      answers,
      books: {
        ledger: sortBy(books.ledger, (r) => r.generation),
        keySpend: sortBy(books.keySpend.filter((r) => r.spent !== 0n || r.byok !== 0n), (r) => `${r.key}|${r.day}`),
        workspaceSpend: sortBy(books.workspaceSpend.filter((r) => r.spent !== 0n || r.byok !== 0n), (r) => `${r.workspace}|${r.day}`),
        accounts: sortBy(books.accounts, (r) => r.workspace),
        holds: sortBy(books.holds.map((h) => ({ ...h, fence: name(h.fence) ?? "" })), (h) => h.id),
        processes: sortBy(books.processes, (r) => r.id)
      }
    }
  })

// ---------------------------------------------------------------------------------------------
// Runs

/** How many sequences a property runs: `SWITCHYARD_PROPERTY_RUNS`, else `fallback`. */
export const runs = (fallback: number): number => {
  const raw = process.env.SWITCHYARD_PROPERTY_RUNS
  const n = raw === undefined ? Number.NaN : Number.parseInt(raw, 10)
  return Number.isFinite(n) && n > 0 ? n : fallback
}

/**
 * fast-check's parameters for a run: `SWITCHYARD_PROPERTY_SEED` and `SWITCHYARD_PROPERTY_PATH`
 * replay a reported failure.
 */
export const parameters = (numRuns: number): fc.Parameters<[Scenario]> => {
  const seed = process.env.SWITCHYARD_PROPERTY_SEED
  const path = process.env.SWITCHYARD_PROPERTY_PATH
  return {
    numRuns,
    ...(seed !== undefined ? { seed: Number.parseInt(seed, 10) } : {}),
    ...(path !== undefined ? { path } : {})
  }
}

/**
 * A PostgreSQL database for the suite, migrated, whose `now()` is the suite's clock: `testclock.now()`
 * reads a one-row table, and the database's search path puts it before `pg_catalog`. Statements
 * and money functions that call `now()` (liveness, a moved row's settlement) read it; the tables
 * stay in `public`. `prepare` runs on the migrated database (a planted function, for one).
 */
export const pgClockLayer = (prepare: Effect.Effect<void, unknown, Sql.SqlClient> = Effect.void): Layer.Layer<Database.StoreServices, unknown> =>
  Layer.unwrap(Effect.gen(function*() {
    const url = yield* Effect.acquireRelease(Effect.promise(() => freshDatabase()), (url) => Effect.promise(() => dropDatabase(url)))
    const name = new URL(url).pathname.slice(1)
    yield* Effect.scoped(Effect.gen(function*() {
      const sql = yield* Sql.SqlClient
      yield* sql.unsafe(`CREATE SCHEMA testclock`)
      yield* sql.unsafe(`CREATE TABLE testclock.clock (t timestamptz NOT NULL)`)
      yield* sql.unsafe(`INSERT INTO testclock.clock VALUES (pg_catalog.now())`)
      yield* sql.unsafe(`CREATE FUNCTION testclock.now() RETURNS timestamptz LANGUAGE sql STABLE AS 'SELECT t FROM testclock.clock'`)
      yield* sql.unsafe(`ALTER DATABASE ${name} SET search_path = public, testclock, pg_catalog`)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))))
    const driver = PgClient.layer({ url: Redacted.make(url), maxConnections: 4 }) as Layer.Layer<Sql.SqlClient, unknown>
    return Database.support(Layer.effectDiscard(Effect.andThen(migrate, prepare)).pipe(Layer.provideMerge(driver)))
  }))

/** Sets the `testclock` of a database made by {@link pgClockLayer}. */
const setPgClock = (sql: SqlClient.SqlClient) => (ms: number) =>
  sql`UPDATE testclock.clock SET t = ${new Date(ms)}`.pipe(Effect.asVoid, Effect.orDie)

/** A store the property runs a sequence on: its services, and how a money store is made on them. */
export interface StoreUnderTest {
  readonly name: string
  readonly context: Context.Context<Sql.SqlClient>
  readonly make: Effect.Effect<MoneyStore, never, Sql.SqlClient>
}

/**
 * Plays one sequence on the model and on each store (each seeded first) and asserts that every
 * store answered every operation as the model did and ends with the same books.
 */
export const sameAsModel = (s: Scenario, stores: ReadonlyArray<StoreUnderTest>): Promise<void> =>
  Effect.runPromise(Effect.gen(function*() {
    const ids = idsOf(s)
    const expected = yield* play(modelTarget(ids), s, ids)
    for (const under of stores) {
      const played = yield* Effect.gen(function*() {
        const sql = yield* Sql.SqlClient
        yield* seed(ids)
        const pg = sql.onDialectOrElse({ sqlite: () => false, orElse: () => true })
        return yield* onClock((setTime) =>
          Effect.gen(function*() {
            const store = yield* under.make
            const setClock = (ms: number) => (pg ? Effect.andThen(setTime(ms), setPgClock(sql)(ms)) : setTime(ms))
            return yield* play(storeTarget(under.name, store, sql, setClock), s, ids)
          })
        )
      }).pipe(Effect.provide(under.context))
      assert.deepStrictEqual(played.answers, expected.answers, `${under.name}: an answer differs from the model's`)
      assert.deepStrictEqual(played.books, expected.books, `${under.name}: the books differ from the model's`)
    }
  }))
