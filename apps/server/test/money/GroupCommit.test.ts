import { assert, layer } from "@effect/vitest"
import { Accounting } from "@switchyard/core/store/Accounting"
import { Array as Arr, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as AccountingRepo from "../../src/store/AccountingRepo.ts"
import type { BatchOp } from "../../src/store/GroupCommit.ts"
import { ledgerSums, seedKey, sqlLayer } from "../support/MoneyStore.ts"
import { storeKind } from "../support/TestServer.ts"

const Live = AccountingRepo.layerWith({ groupCommit: { workers: 1, maxBatch: 64 } }).pipe(Layer.provideMerge(sqlLayer()))

const now = "2030-09-09T09:00:00.000Z"
const expires = "2030-09-09T09:10:00.000Z"

/** A script of operations on one key whose limit is 30 nanos: refusals, a release, caps and a duplicate. */
const script = (key: { keyId: string; workspaceId: string }): ReadonlyArray<BatchOp> => {
  const id = (n: number) => `${key.keyId}-hold-${n}`
  const reserve = (n: number, amount: number): BatchOp => ({
    op: "reserve", id: id(n), owner: null, key: key.keyId, workspace: key.workspaceId, amount: String(amount), byok: false, now, expires
  })
  const settle = (n: number, cost: number, generation: string): BatchOp => ({
    op: "settle", id: id(n), key: key.keyId, workspace: key.workspaceId, generation, model: "m/m", provider: "p",
    prompt_tokens: 1, total_tokens: 1, cost: String(cost), byok: false, now
  })
  return [
    reserve(1, 10),
    reserve(2, 10),
    reserve(3, 15),
    { op: "release", id: id(1) },
    reserve(4, 15),
    settle(2, 12, `${key.keyId}-gen-2`),
    settle(2, 99, `${key.keyId}-gen-2`),
    settle(4, 40, `${key.keyId}-gen-4`),
    reserve(5, 1)
  ]
}

const seed = Effect.gen(function*() {
  const accounting = yield* Accounting
  const key = yield* seedKey({ limitNanos: 30n })
  yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1000n, note: null, grantedByKeyId: null })
  return key
})

const state = (keyId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sums = yield* ledgerSums(keyId)
    const spend = yield* sql<{ day: string; spent: string }>`SELECT day::text AS day, spent_nanos::text AS spent FROM key_spend
      WHERE key_id = ${keyId} ORDER BY day`.pipe(Effect.orDie)
    const holds = yield* sql<{ amount: string }>`SELECT amount_nanos::text AS amount FROM holds WHERE key_id = ${keyId}
      ORDER BY amount_nanos`.pipe(Effect.orDie)
    return { rows: sums.rows, total: sums.total, spend, holds: holds.map((h) => h.amount) }
  })

layer(Live, { timeout: 120_000, excludeTestServices: true })(`group commit (${storeKind})`, (it) => {
  it.effect("a batch answers each operation exactly as running them one by one does", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const oneByOne = yield* seed
      const batched = yield* seed
      const single = AccountingRepo.single(sql)
      const expected = yield* Effect.forEach(script(oneByOne), single).pipe(Effect.orDie)
      const rows = yield* sql<{ out: string }>`SELECT switchyard_batch(${JSON.stringify(script(batched))}::jsonb)::text AS out`.pipe(
        Effect.orDie
      )
      const results = JSON.parse(rows[0]!.out) as Array<Record<string, unknown>>
      assert.deepStrictEqual(results, expected.map((r) => JSON.parse(JSON.stringify(r))))
      assert.deepStrictEqual(results.map((r) => r.o_outcome ?? r.o_cost ?? "released"), [
        "ok", "ok", "key_limit", "released", "ok", "12", "12", "18", "key_limit"
      ])
      assert.deepStrictEqual(results[2], { o_outcome: "key_limit", o_limit: "30", o_reset: null, o_room: "10" })
      assert.deepStrictEqual([results[7]!.o_capped, results[6]!.o_duplicate], [true, true])
      assert.deepStrictEqual(yield* state(batched.keyId), yield* state(oneByOne.keyId))
      assert.deepStrictEqual((yield* state(batched.keyId)).total, 30n)
    }))

  it.effect("concurrent callers share statements and each gets its own result; a failing operation fails alone", () =>
    Effect.gen(function*() {
      const accounting = yield* Accounting
      const cost = 7n
      const key = yield* seedKey({ limitNanos: 20n * cost })
      yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1000n * cost, note: null, grantedByKeyId: null })
      const outcomes = yield* Effect.forEach(
        Arr.range(1, 100),
        (i) =>
          Effect.exit(
            i % 25 === 0
              ? accounting.settle(
                { id: `missing-${i}`, keyId: `no-such-key-${Crypto.randomUUID()}`, workspaceId: key.workspaceId, amountNanos: 1n, byok: false, expiresAt: new Date() },
                { generationId: `gen-missing-${Crypto.randomUUID()}`, model: "m/m", provider: "p", promptTokens: 1, totalTokens: 1, costNanos: 1n, isByok: false }
              )
              : accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: cost, byok: false }).pipe(
                Effect.flatMap((r) =>
                  accounting.settle(r, { generationId: `gen-${Crypto.randomUUID()}`, model: "m/m", provider: "p", promptTokens: 1, totalTokens: 1, costNanos: cost, isByok: false })
                )
              )
          ),
        { concurrency: "unbounded" }
      )
      const failures = outcomes.filter(Exit.isFailure)
      const defects = failures.filter((e) => e.cause.reasons.some((r) => r._tag === "Die"))
      assert.strictEqual(defects.length, 4, "each settlement on a missing key fails, alone")
      assert.strictEqual(outcomes.filter(Exit.isSuccess).length, 20)
      assert.strictEqual(failures.length - defects.length, 76)
      const sums = yield* ledgerSums(key.keyId)
      assert.deepStrictEqual([sums.rows, sums.total], [20, 20n * cost])
      assert.strictEqual((yield* accounting.credits(key.workspaceId)).heldNanos, 0n)
    }))
})
