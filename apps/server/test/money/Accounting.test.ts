import { assert, layer } from "@effect/vitest"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Accounting } from "@switchyard/core/store/Accounting"
import type { Reservation } from "@switchyard/core/store/Accounting"
import { Array as Arr, Effect, Layer, Result } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as AccountingLive from "../../src/store/money/AccountingLive.ts"
import * as ApiKeyStoreLive from "../../src/store/keys/ApiKeyStoreLive.ts"
import { ledgerSums, moneyStores, nanos, onClock, refusal, edge, seedKey, sqlLayer } from "../support/MoneyStore.ts"
import type { MoneyStoreKind } from "../support/MoneyStore.ts"

const gen = () => `gen-${Crypto.randomUUID()}`

/** The key's record as the key store lists it (usage and limit remaining, from the spend counters the money store moves). */
const usage = (key: { keyId: string; userId: string; workspaceId: string }, now = new Date()) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeyStore
    const list = yield* keys.list({ userId: key.userId, workspaceId: key.workspaceId, includeDisabled: true, offset: 0, limit: 100, now })
    return list[0]!
  })

const settle = (reservation: Reservation, costNanos: bigint, options: { isByok?: boolean; generationId?: string } = {}) =>
  Effect.flatMap(Accounting, (accounting) =>
    accounting.settle(reservation, {
      generationId: options.generationId ?? gen(),
      model: "test/embed",
      provider: "test",
      promptTokens: 10,
      totalTokens: 10,
      costNanos,
      isByok: options.isByok ?? false
    }))

for (const kind of moneyStores) suite(kind)

function suite(kind: MoneyStoreKind) {
  const Live = Layer.mergeAll(AccountingLive.layer, ApiKeyStoreLive.layer).pipe(Layer.provideMerge(sqlLayer(kind)))

  layer(Live, { timeout: 120_000, excludeTestServices: true })(`accounting under concurrency (${kind})`, (it) => {
    it.effect("200 concurrent requests on a key that can afford 50: exactly 50 succeed, the rest 402 key limit", () =>
      Effect.gen(function*() {
        const accounting = yield* Accounting
        const cost = nanos("0.000123457")
        const key = yield* seedKey({ limitNanos: 50n * cost })
        yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 10_000n * cost, note: null, grantedByKeyId: null })
        const results = yield* Effect.forEach(
          Arr.range(1, 200),
          () =>
            accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: cost, byok: false }).pipe(
              Effect.flatMap((r) => settle(r, cost)),
              Effect.result
            ),
          { concurrency: "unbounded" }
        )
        const ok = results.filter(Result.isSuccess)
        const refused = results.filter(Result.isFailure).map((r) => edge(r.failure))
        assert.strictEqual(ok.length, 50)
        assert.strictEqual(refused.length, 150)
        for (const error of refused) {
          assert.strictEqual(error._tag, "PaymentRequired")
          assert.include(error.message, "key limit")
          assert.strictEqual(error.metadata?.reason, "key_limit")
        }
        const sums = yield* ledgerSums(key.keyId)
        assert.strictEqual(sums.rows, 50)
        assert.strictEqual(sums.total, 50n * cost)
        const record = yield* usage(key)
        assert.strictEqual(record.usage, Number(sums.total) / 1e9)
        assert.strictEqual(record.limit_remaining, 0)
        const credits = yield* accounting.credits(key.workspaceId)
        assert.strictEqual(credits.totalUsageNanos, sums.paid)
        assert.strictEqual(credits.heldNanos, 0n)
      }))

    it.effect("200 concurrent requests on a workspace whose credits afford 50: exactly 50 succeed, the rest 402 workspace credits", () =>
      Effect.gen(function*() {
        const accounting = yield* Accounting
        const cost = nanos("0.02")
        const key = yield* seedKey()
        const other = yield* seedKey({ workspaceId: key.workspaceId, userId: key.userId })
        yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 50n * cost, note: "test", grantedByKeyId: null })
        const results = yield* Effect.forEach(
          Arr.range(1, 200),
          (i) => {
            const k = i % 2 === 0 ? key : other
            return accounting.reserve({ keyId: k.keyId, workspaceId: k.workspaceId, amountNanos: cost, byok: false }).pipe(
              Effect.flatMap((r) => settle(r, cost)),
              Effect.result
            )
          },
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Result.isSuccess).length, 50)
        for (const error of results.filter(Result.isFailure).map((r) => edge(r.failure))) {
          assert.strictEqual(error._tag, "PaymentRequired")
          assert.include(error.message, "workspace credits")
        }
        const credits = yield* accounting.credits(key.workspaceId)
        const sums = [yield* ledgerSums(key.keyId), yield* ledgerSums(other.keyId)]
        assert.strictEqual(credits.totalUsageNanos, sums[0]!.paid + sums[1]!.paid)
        assert.strictEqual(credits.totalUsageNanos, credits.totalCreditsNanos)
      }))

    it.effect("open holds count: a key affording 3 holds admits 3, refuses the 4th, and admits again after a release", () =>
      Effect.gen(function*() {
        const accounting = yield* Accounting
        const key = yield* seedKey({ limitNanos: 30n })
        yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1000n, note: null, grantedByKeyId: null })
        const reserve = accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 10n, byok: false })
        const held = yield* Effect.all([reserve, reserve, reserve])
        const fourth = yield* refusal(reserve)
        assert.include(fourth.message, "key limit")
        yield* accounting.release(held[0]!)
        yield* accounting.release(held[0]!)
        const again = yield* reserve
        yield* settle(again, 7n)
        const record = yield* usage(key)
        assert.strictEqual(record.usage, 7e-9)
        assert.strictEqual(record.limit_remaining, 23e-9)
        const fifth = yield* refusal(accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 4n, byok: false }))
        assert.strictEqual(fifth.metadata?.reason, "key_limit")
      }))

    it.effect("settle is idempotent on the generation id", () =>
      Effect.gen(function*() {
        const accounting = yield* Accounting
        const key = yield* seedKey()
        yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1000n, note: null, grantedByKeyId: null })
        const reservation = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 100n, byok: false })
        const generationId = gen()
        const first = yield* settle(reservation, 60n, { generationId })
        const second = yield* settle(reservation, 90n, { generationId })
        assert.deepStrictEqual([first.costNanos, first.duplicate], [60n, false])
        assert.deepStrictEqual([second.costNanos, second.duplicate], [60n, true])
        const sums = yield* ledgerSums(key.keyId)
        assert.deepStrictEqual([sums.rows, sums.total], [1, 60n])
        assert.strictEqual((yield* accounting.credits(key.workspaceId)).totalUsageNanos, 60n)
      }))

    it.effect("settling one generation id twice at once writes one row; the later call waits for the first and says duplicate", () =>
      Effect.gen(function*() {
        const accounting = yield* Accounting
        const key = yield* seedKey({ limitNanos: 1000n })
        yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1000n, note: null, grantedByKeyId: null })
        const reservation = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 100n, byok: false })
        const generationId = gen()
        const [first, second, third] = yield* Effect.all([
          settle(reservation, 60n, { generationId }),
          settle(reservation, 90n, { generationId }),
          settle(reservation, 30n, { generationId })
        ], { concurrency: "unbounded" })
        assert.deepStrictEqual([first!.costNanos, first!.duplicate], [60n, false])
        assert.deepStrictEqual([second!.costNanos, second!.duplicate, third!.costNanos, third!.duplicate], [60n, true, 60n, true])
        const sums = yield* ledgerSums(key.keyId)
        assert.deepStrictEqual([sums.rows, sums.total], [1, 60n])
        const record = yield* usage(key)
        assert.strictEqual(record.limit_remaining, 940e-9)
      }))

    it.effect("a cost above the hold is charged only up to the hold plus the room left, and says so", () =>
      Effect.gen(function*() {
        const accounting = yield* Accounting
        const key = yield* seedKey({ limitNanos: 100n })
        yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1000n, note: null, grantedByKeyId: null })
        const big = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 60n, byok: false })
        const small = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 30n, byok: false })
        const settled = yield* settle(small, 45n)
        assert.deepStrictEqual([settled.costNanos, settled.capped], [40n, true])
        const rest = yield* settle(big, 80n)
        assert.deepStrictEqual([rest.costNanos, rest.capped], [60n, true])
        const record = yield* usage(key)
        assert.strictEqual(record.usage, 100e-9)
        assert.strictEqual(record.limit_remaining, 0)
      }))

    it.effect("BYOK requests skip the credit balance and count toward the limit only with include_byok_in_limit", () =>
      Effect.gen(function*() {
        const accounting = yield* Accounting
        const excluded = yield* seedKey({ limitNanos: 10n })
        const byok = { keyId: excluded.keyId, workspaceId: excluded.workspaceId, amountNanos: 8n, byok: true }
        yield* settle(yield* accounting.reserve(byok), 8n, { isByok: true })
        yield* settle(yield* accounting.reserve(byok), 8n, { isByok: true })
        const record = yield* usage(excluded)
        assert.deepStrictEqual([record.usage, record.byok_usage, record.limit_remaining], [0, 16e-9, 10e-9])
        assert.strictEqual((yield* accounting.credits(excluded.workspaceId)).totalUsageNanos, 0n)

        const included = yield* seedKey({ limitNanos: 10n, includeByokInLimit: true })
        const counted = { keyId: included.keyId, workspaceId: included.workspaceId, amountNanos: 8n, byok: true }
        yield* settle(yield* accounting.reserve(counted), 8n, { isByok: true })
        const refused = yield* refusal(accounting.reserve(counted))
        assert.include(refused.message, "key limit")
        yield* accounting.addCredits({ workspaceId: included.workspaceId, amountNanos: 1n, note: null, grantedByKeyId: null })
        const paid = yield* refusal(accounting.reserve({ ...counted, byok: false, amountNanos: 2n }))
        assert.include(paid.message, "workspace credits")
      }))

    it.effect("without a credit grant the workspace balance stops nothing, spend is recorded exactly, and the first grant turns prepaid credits on", () =>
      Effect.gen(function*() {
        const accounting = yield* Accounting
        const key = yield* seedKey()
        const paid = { keyId: key.keyId, workspaceId: key.workspaceId, byok: false }
        const first = yield* accounting.reserve({ ...paid, amountNanos: 1_000_000n })
        const settled = yield* settle(first, 2_000_000n)
        assert.deepStrictEqual([settled.costNanos, settled.capped], [2_000_000n, false])
        const before = yield* accounting.credits(key.workspaceId)
        assert.deepStrictEqual([before.totalCreditsNanos, before.totalUsageNanos], [0n, 2_000_000n])
        assert.strictEqual((yield* ledgerSums(key.keyId)).total, 2_000_000n)

        yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 3_000_000n, note: null, grantedByKeyId: null })
        const refused = yield* refusal(accounting.reserve({ ...paid, amountNanos: 1_000_001n }))
        assert.strictEqual(refused._tag, "PaymentRequired")
        assert.strictEqual(refused.metadata?.reason, "workspace_credits")
        const admitted = yield* accounting.reserve({ ...paid, amountNanos: 1_000_000n })
        const capped = yield* settle(admitted, 1_500_000n)
        assert.deepStrictEqual([capped.costNanos, capped.capped], [1_000_000n, true])
      }))

    it.effect("200 concurrent requests on a key that can afford 50 in a workspace without credits: exactly 50 succeed", () =>
      Effect.gen(function*() {
        const accounting = yield* Accounting
        const cost = nanos("0.000123457")
        const key = yield* seedKey({ limitNanos: 50n * cost })
        const results = yield* Effect.forEach(
          Arr.range(1, 200),
          () =>
            accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: cost, byok: false }).pipe(
              Effect.flatMap((r) => settle(r, cost)),
              Effect.result
            ),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Result.isSuccess).length, 50)
        for (const error of results.filter(Result.isFailure).map((r) => edge(r.failure))) {
          assert.strictEqual(error.metadata?.reason, "key_limit")
        }
        assert.strictEqual((yield* ledgerSums(key.keyId)).total, 50n * cost)
        assert.strictEqual((yield* accounting.credits(key.workspaceId)).totalUsageNanos, 50n * cost)
      }))

    it.effect("a zero-cost request needs no credits and still writes its ledger row", () =>
      Effect.gen(function*() {
        const accounting = yield* Accounting
        const key = yield* seedKey({ limitNanos: 0n })
        const reservation = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 0n, byok: false })
        const settled = yield* settle(reservation, 0n)
        assert.strictEqual(settled.costNanos, 0n)
        assert.strictEqual((yield* ledgerSums(key.keyId)).rows, 1)
        const paid = yield* refusal(accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 1n, byok: false }))
        assert.include(paid.message, "key limit")
      }))

    it.effect("a disabled or deleted key cannot reserve", () =>
      Effect.gen(function*() {
        const accounting = yield* Accounting
        const sql = yield* SqlClient.SqlClient
        const key = yield* seedKey()
        yield* sql`UPDATE api_keys SET disabled = true WHERE id = ${key.keyId}`
        const error = yield* refusal(accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 1n, byok: false }))
        assert.strictEqual(error._tag, "Unauthorized")
      }))
  })

  layer(Live, { timeout: 60_000, excludeTestServices: true })(`accounting over time (${kind})`, (it) => {
    it.effect("a lease left by a process that died counts until it expires, and the next grant deletes it", () =>
      onClock((setTime) => Effect.gen(function*() {
        const accounting = yield* Accounting
        const sql = yield* SqlClient.SqlClient
        const key = yield* seedKey({ limitNanos: 10n })
        yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1000n, note: null, grantedByKeyId: null })
        const t0 = new Date("2030-03-04T10:00:00Z")
        yield* setTime(t0.getTime())
        // What a process that died leaves: its lease, owned by nobody alive here, expiring in 30 s.
        yield* sql`INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner, fence)
          VALUES ('lease-dead', ${key.keyId}, ${key.workspaceId}, 10, ${false}, ${t0}, ${new Date(t0.getTime() + 30_000)}, 'dead-process', 1000000)`
        yield* setTime(t0.getTime() + 29_000)
        const during = yield* refusal(accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 1n, byok: false }))
        assert.include(during.message, "key limit")
        yield* setTime(t0.getTime() + 31_000)
        assert.strictEqual((yield* accounting.credits(key.workspaceId)).heldNanos, 0n)
        const after = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 10n, byok: false })
        const left = yield* sql<{ id: string }>`SELECT id FROM holds WHERE key_id = ${key.keyId}`
        assert.deepStrictEqual(left.map((r) => r.id), [after.lease])
        yield* accounting.release(after)
      })))

    const windows = [
      {
        reset: "daily" as const,
        spentAt: "2030-05-14T23:59:59.999Z",
        sameWindow: "2030-05-14T00:00:00Z",
        nextWindow: "2030-05-15T00:00:00Z"
      },
      {
        reset: "weekly" as const,
        spentAt: "2030-05-12T23:59:59.999Z",
        sameWindow: "2030-05-06T00:00:00Z",
        nextWindow: "2030-05-13T00:00:00Z"
      },
      {
        reset: "monthly" as const,
        spentAt: "2030-05-31T23:59:59.999Z",
        sameWindow: "2030-05-01T00:00:00Z",
        nextWindow: "2030-06-01T00:00:00Z"
      }
    ]
    for (const w of windows) {
      it.effect(`a ${w.reset} limit resets at its UTC boundary and not before`, () =>
        onClock((setTime) => Effect.gen(function*() {
          const accounting = yield* Accounting
          const key = yield* seedKey({ limitNanos: 100n, limitReset: w.reset })
          yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 10_000n, note: null, grantedByKeyId: null })
          const spentAt = new Date(w.spentAt)
          yield* setTime(spentAt.getTime())
          const first = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 100n, byok: false })
          yield* settle(first, 100n)
          for (const at of [w.sameWindow, w.spentAt]) {
            yield* setTime(Date.parse(at))
            const refused = yield* refusal(accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 1n, byok: false }))
            assert.include(refused.message, "key limit", at)
            const record = yield* usage(key, new Date(at))
            assert.strictEqual(record.limit_remaining, 0, at)
          }
          const next = new Date(w.nextWindow)
          yield* setTime(next.getTime())
          const record = yield* usage(key, next)
          assert.strictEqual(record.limit_remaining, 100e-9)
          assert.strictEqual(record.usage, 100e-9)
          const admitted = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 100n, byok: false })
          yield* accounting.release(admitted)
        })))
    }

    it.effect("usage_daily, usage_weekly and usage_monthly count the current UTC day, Monday week and month", () =>
      onClock((setTime) => Effect.gen(function*() {
        const accounting = yield* Accounting
        const key = yield* seedKey()
        yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 10_000n, note: null, grantedByKeyId: null })
        const spend = (at: string, amount: bigint) =>
          Effect.gen(function*() {
            yield* setTime(Date.parse(at))
            const r = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: amount, byok: false })
            yield* settle(r, amount)
          })
        yield* spend("2030-04-30T12:00:00Z", 1n)
        yield* spend("2030-05-05T23:59:59Z", 10n)
        yield* spend("2030-05-06T00:00:00Z", 100n)
        yield* spend("2030-05-08T08:00:00Z", 1000n)
        const record = yield* usage(key, new Date("2030-05-08T20:00:00Z"))
        assert.strictEqual(record.usage, 1111e-9)
        assert.strictEqual(record.usage_monthly, 1110e-9)
        assert.strictEqual(record.usage_weekly, 1100e-9)
        assert.strictEqual(record.usage_daily, 1000e-9)
      })))

    it.effect("the repository follows the Effect clock: a daily limit spent at 23:00 UTC is free again an hour later", () =>
      onClock((setTime) =>
        Effect.gen(function*() {
          const accounting = yield* Accounting
          yield* setTime(Date.parse("2031-01-01T23:00:00Z"))
          const key = yield* seedKey({ limitNanos: 5n, limitReset: "daily" })
          yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 100n, note: null, grantedByKeyId: null })
          yield* settle(yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 5n, byok: false }), 5n)
          const refused = yield* refusal(accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 1n, byok: false }))
          assert.include(refused.message, "key limit")
          yield* setTime(Date.parse("2031-01-02T00:00:00Z"))
          yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 5n, byok: false })
        })
      ))
  })
}
