import { assert, describe, it, layer } from "@effect/vitest"
import * as SpendLease from "@switchyard/core/accounting/SpendLease"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as MoneyStore from "../../src/store/money/MoneyStore.ts"
import { ledgerSums, moneyStores, seedKey, sqlLayer } from "../support/MoneyStore.ts"
import { tempDir } from "../support/TestServer.ts"

const t0 = Date.parse("2030-05-14T10:00:00Z")

const row = (
  key: { keyId: string; workspaceId: string },
  cost: bigint,
  lease: { id: string; fence: string | null } | null,
  options: { generation?: string; byok?: boolean; at?: number; attempts?: string } = {}
): MoneyStore.LedgerRow => ({
  generation: options.generation ?? `gen-${Crypto.randomUUID()}`,
  key: key.keyId,
  workspace: key.workspaceId,
  model: "test/embed",
  provider: "test",
  prompt_tokens: 3,
  total_tokens: 3,
  cost: cost.toString(),
  byok: options.byok ?? false,
  created: new Date(options.at ?? t0).toISOString(),
  latency_ms: 12,
  cached_items: 0,
  cached_tokens: 0,
  attempts: options.attempts ?? null,
  lease: lease?.id ?? null,
  fence: lease?.fence ?? null
})

const grantTo = (store: MoneyStore.MoneyStore, key: { keyId: string; workspaceId: string }, id: string, ask: SpendLease.Ask, at = t0) =>
  store.grant({ id, owner: "owner-test", keyId: key.keyId, workspaceId: key.workspaceId, byok: false, ask, nowMs: at, expiresAtMs: at + 600_000 })

/** What the counters say a key and its workspace spent, all time and on the row's day. */
const counters = (key: { keyId: string; workspaceId: string }, day: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keyDay = (day: string) =>
      sql<{ n: string }>`SELECT CAST(COALESCE(SUM(spent_nanos), 0) AS text) AS n FROM key_spend WHERE key_id = ${key.keyId} AND day = ${day}`
    const workspaceDay = (day: string) =>
      sql<{ n: string }>`SELECT CAST(COALESCE(SUM(spent_nanos), 0) AS text) AS n FROM workspace_spend
        WHERE workspace_id = ${key.workspaceId} AND day = ${day}`
    const keyAll = yield* keyDay("-infinity")
    const keyOn = yield* keyDay(day)
    const wsAll = yield* workspaceDay("-infinity")
    const wsOn = yield* workspaceDay(day)
    return [keyAll, keyOn, wsAll, wsOn].map((r) => BigInt(r[0]!.n))
  }).pipe(Effect.orDie)

for (const kind of moneyStores) {
  layer(sqlLayer(kind), { timeout: 60_000, excludeTestServices: true })(`the money store's operations (${kind})`, (it) => {
    it.effect("a grant refuses past the key limit with the room left, grants within it, and takes the token of its row", () =>
      Effect.gen(function*() {
        const store = yield* MoneyStore.make
        const key = yield* seedKey({ limitNanos: 100n })
        const lease = `lease-${Crypto.randomUUID()}`
        const refused = yield* grantTo(store, key, lease, { ...SpendLease.upTo(0n), need: 101n })
        assert.deepStrictEqual([refused.outcome, refused.limit, refused.room], ["key_limit", 100n, 100n])
        const granted = yield* grantTo(store, key, lease, { need: 30n, desired: 60n, unit: 10n, edge: 0n, divisor: 1n })
        assert.deepStrictEqual([granted.outcome, granted.granted, granted.room], ["ok", 60n, 40n])
        assert.isString(granted.fence)
        assert.deepStrictEqual(yield* store.readLease(lease), { amount: 60n, fence: granted.fence! })
        // A second grant to the same lease keeps its token; the room excludes what it holds.
        const more = yield* grantTo(store, key, lease, { need: 40n, desired: 40n, unit: 1n, edge: 0n, divisor: 1n })
        assert.deepStrictEqual([more.granted, more.room, more.fence], [40n, 0n, granted.fence])
        const over = yield* grantTo(store, key, lease, { need: 1n, desired: 1n, unit: 1n, edge: 0n, divisor: 1n })
        assert.deepStrictEqual([over.outcome, over.room], ["key_limit", 0n])
      }))

    it.effect("a flush writes each row once by generation id, moves the counters, usage and lease, and settles a row whose lease was taken under the key's room", () =>
      Effect.gen(function*() {
        const store = yield* MoneyStore.make
        const sql = yield* SqlClient.SqlClient
        const key = yield* seedKey()
        yield* store.addCredits({ id: Crypto.randomUUID(), workspaceId: key.workspaceId, amountNanos: 10_000n, note: null, grantedByKeyId: null, nowMs: t0 })
        const lease = `lease-${Crypto.randomUUID()}`
        const granted = yield* grantTo(store, key, lease, { need: 500n, desired: 500n, unit: 1n, edge: 0n, divisor: 1n })
        assert.strictEqual(granted.granted, 500n)
        const held = { id: lease, fence: granted.fence }
        const first = row(key, 123n, held)
        const byok = row(key, 7n, null, { byok: true })
        const out = yield* store.flush([first, byok, row(key, 0n, held)], t0 + 900_000)
        assert.deepStrictEqual(out.map((r) => [r.cost, r.written, r.fenced]), [[123n, true, false], [7n, true, false], [0n, true, false]])
        // The same generation id again: not written, answered with the cost written before.
        const again = yield* store.flush([{ ...first, cost: "999" }], t0 + 900_000)
        assert.deepStrictEqual(again.map((r) => [r.generation, r.cost, r.written, r.fenced]), [[first.generation, 123n, false, false]])
        assert.deepStrictEqual(yield* counters(key, "2030-05-14"), [123n, 123n, 123n, 123n])
        const credits = yield* store.credits(key.workspaceId, t0)
        assert.deepStrictEqual([credits.credits, credits.usage, credits.held], [10_000n, 123n, 377n])
        assert.deepStrictEqual(yield* store.readLease(lease), { amount: 377n, fence: granted.fence! })
        // The lease taken and granted again: a row answered under its old token is settled under the
        // room every scope has left now (FencedLease.settlesMoved), counting the new lease's hold.
        yield* sql`DELETE FROM holds WHERE id = ${lease}`
        const regranted = yield* grantTo(store, key, lease, { need: 10n, desired: 10n, unit: 1n, edge: 0n, divisor: 1n })
        assert.notStrictEqual(regranted.fence, granted.fence)
        const stale = row(key, 5n, held)
        const fenced = yield* store.flush([stale], t0 + 900_000)
        assert.deepStrictEqual(fenced.map((r) => [r.cost, r.written, r.fenced]), [[5n, true, true]])
        // A row naming a lease but no token (its lease was lost before it settled) is settled the same way, lease row or not.
        const tokenless = yield* store.flush([row(key, 5n, { id: lease, fence: null }), row(key, 5n, { id: "lease-gone", fence: null })], t0 + 900_000)
        assert.deepStrictEqual(tokenless.map((r) => [r.cost, r.written, r.fenced]), [[5n, true, true], [5n, true, true]])
        // Credits 10,000, usage 138, the new lease's 10 held: a moved row of 9,853 would overshoot, one of 9,852 fits.
        const over = row(key, 9_853n, held)
        const exact = row(key, 9_852n, held)
        const room = yield* store.flush([over, exact], t0 + 900_000)
        assert.deepStrictEqual(room.map((r) => [r.cost, r.written, r.fenced]), [[null, false, true], [9_852n, true, true]])
        assert.deepStrictEqual(yield* ledgerSums(key.keyId), { total: 9_997n, paid: 9_990n, rows: 7 })
        const written = yield* store.written([first, stale, byok, over])
        assert.deepStrictEqual([...written.entries()].sort(), [[byok.generation, 7n], [first.generation, 123n], [stale.generation, 5n]].sort())
      }))

    it.effect("a flush keeps each row's upstream attempts as they came (JSON text), and none for a row without them", () =>
      Effect.gen(function*() {
        const store = yield* MoneyStore.make
        const sql = yield* SqlClient.SqlClient
        const key = yield* seedKey()
        const attempts = JSON.stringify([{ provider: "test", status: 502 }, { provider: "other", status: 200, upstream_id: "up-1" }])
        const recorded = row(key, 11n, null, { attempts })
        const bare = row(key, 12n, null)
        yield* store.flush([recorded, bare], t0)
        const stored = yield* sql<{ generation_id: string; attempts: string | null }>`SELECT generation_id, attempts FROM ledger
          WHERE generation_id IN ${sql.in([recorded.generation, bare.generation])}`
        assert.deepStrictEqual(
          Object.fromEntries(stored.map((r) => [r.generation_id, r.attempts])),
          { [recorded.generation]: attempts, [bare.generation]: null }
        )
      }))

    it.effect("a hand-back lowers the lease and ends it at zero; an end deletes the row only under its token", () =>
      Effect.gen(function*() {
        const store = yield* MoneyStore.make
        const key = yield* seedKey()
        const lease = `lease-${Crypto.randomUUID()}`
        const granted = yield* grantTo(store, key, lease, SpendLease.upTo(50n))
        assert.strictEqual(granted.granted, 50n)
        yield* store.handBack(lease, 20n)
        assert.strictEqual((yield* store.readLease(lease))?.amount, 30n)
        yield* store.handBack(lease, 30n)
        assert.isUndefined(yield* store.readLease(lease))
        const next = yield* grantTo(store, key, lease, SpendLease.upTo(5n))
        yield* store.end(lease, granted.fence!)
        assert.strictEqual((yield* store.readLease(lease))?.amount, 5n, "another token: the row stays")
        yield* store.end(lease, next.fence!)
        assert.isUndefined(yield* store.readLease(lease))
      }))

    it.effect("a budget and prepaid credits refuse in that order, each with its room", () =>
      Effect.gen(function*() {
        const store = yield* MoneyStore.make
        const sql = yield* SqlClient.SqlClient
        const key = yield* seedKey()
        yield* store.addCredits({ id: Crypto.randomUUID(), workspaceId: key.workspaceId, amountNanos: 50n, note: null, grantedByKeyId: null, nowMs: t0 })
        yield* sql`INSERT INTO workspace_budgets (id, workspace_id, interval, limit_nanos, created_at, updated_at)
          VALUES (${Crypto.randomUUID()}, ${key.workspaceId}, 'daily', 80, ${new Date(t0)}, ${new Date(t0)})`
        yield* store.flush([row(key, 30n, null)], t0)
        const lease = `lease-${Crypto.randomUUID()}`
        const budget = yield* grantTo(store, key, lease, { ...SpendLease.upTo(0n), need: 51n })
        assert.deepStrictEqual([budget.outcome, budget.limit, budget.reset, budget.room], ["workspace_budget", 80n, "daily", 50n])
        const credits = yield* grantTo(store, key, lease, { ...SpendLease.upTo(0n), need: 21n })
        assert.deepStrictEqual([credits.outcome, credits.room], ["workspace_credits", 20n])
        // The next UTC day the daily budget is free again; the credits are not.
        const tomorrow = yield* grantTo(store, key, lease, { ...SpendLease.upTo(0n), need: 20n }, t0 + 86_400_000)
        assert.deepStrictEqual([tomorrow.outcome, tomorrow.granted], ["ok", 20n])
      }))
  })
}

describe("two clients on one SQLite file (two worker processes)", () => {
  // One thread cannot hold two connections' transactions at once (a connection waiting for the
  // write lock blocks the thread that holds it), so the two clients take turns here, one whole
  // operation each; `TwoProcesses.test.ts` races two real processes on one file.
  it.effect("a key limit of 40 spent through both, turn by turn: exactly 40 granted and written, each sees the other's commits", () =>
    Effect.gen(function*() {
      const dir = tempDir("money-file")
      const file = NodePath.join(dir, "switchyard.db")
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      const key = yield* seedKey({ limitNanos: 40n }).pipe(Effect.provide(sqlLayer("sqlite", file)))
      const a = yield* Layer.build(sqlLayer("sqlite", file))
      const b = yield* Layer.build(sqlLayer("sqlite", file))
      const spend = (name: string, i: number) =>
        Effect.gen(function*() {
          const store = yield* MoneyStore.make
          const lease = `lease-${name}-${i}`
          // Asks for 3 and keeps the lease: the other client's grants count it until it is spent.
          const granted = yield* grantTo(store, key, lease, { need: 1n, desired: 3n, unit: 1n, edge: 0n, divisor: 1n })
          if (granted.outcome !== "ok") return 0n
          const out = yield* store.flush([row(key, granted.granted!, { id: lease, fence: granted.fence })], t0 + 600_000)
          return out[0]!.written ? out[0]!.cost! : 0n
        })
      const spent = { a: 0n, b: 0n }
      for (let i = 0; i < 30; i++) {
        spent.a += yield* spend("a", i).pipe(Effect.provide(a))
        spent.b += yield* spend("b", i).pipe(Effect.provide(b))
      }
      assert.strictEqual(spent.a + spent.b, 40n)
      assert.isTrue(spent.a > 0n && spent.b > 0n, `both wrote: ${spent.a} and ${spent.b}`)
      const sums = yield* ledgerSums(key.keyId).pipe(Effect.provide(a))
      assert.deepStrictEqual(sums.total, 40n)
    }).pipe(Effect.scoped), 60_000)
})
