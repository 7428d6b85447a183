import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Accounting, type Reservation } from "@switchyard/core/store/Accounting"
import { Effect, Exit, Fiber, Layer, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as AccountingLive from "../../src/store/money/AccountingLive.ts"
import * as Database from "../../src/store/database/Database.ts"
import { migrate } from "../../src/store/database/Migrations.ts"
import { ledgerSums, seedKey } from "../support/MoneyStore.ts"
import { type StoreRelay, startStoreRelay } from "../support/StoreRelay.ts"
import { dropDatabase, freshDatabase, storeKind } from "../support/TestServer.ts"

/**
 * The accounting of one gateway process whose PostgreSQL connection goes through a relay the test
 * cuts; the test reads and seeds the database directly.
 */
const withFlicker = <A>(
  options: AccountingLive.AccountingOptions,
  body: (input: { readonly accounting: Accounting["Service"]; readonly relay: StoreRelay }) => Effect.Effect<A, unknown, SqlClient.SqlClient>
) =>
  Effect.gen(function*() {
    const url = yield* Effect.acquireRelease(Effect.promise(() => freshDatabase()), (url) => Effect.promise(() => dropDatabase(url)))
    const relay = yield* Effect.acquireRelease(Effect.promise(() => startStoreRelay(url)), (relay) => Effect.promise(() => relay.cut()))
    const direct = Layer.effectDiscard(migrate).pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 })))
    const relayed = Database.support(PgClient.layer({ url: Redacted.make(relay.url), maxConnections: 4 }))
    return yield* Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(AccountingLive.layerWith(options).pipe(Layer.provide(relayed)), scope)
      const accounting = context.mapUnsafe.get(Accounting.key) as Accounting["Service"]
      return yield* body({ accounting, relay }).pipe(Effect.ensuring(Scope.close(scope, Exit.void).pipe(Effect.timeout("10 seconds"), Effect.ignore)))
    }).pipe(Effect.provide(direct))
  }).pipe(Effect.scoped)

const settleRequest = (generationId: string, cost: bigint) => ({
  generationId,
  model: "acme/embed",
  provider: "alpha",
  promptTokens: 1,
  totalTokens: 1,
  costNanos: cost,
  isByok: false
})

/** Reserves and settles at 100 nanos each until the key refuses: how many were admitted. */
const spendTheRest = (accounting: Accounting["Service"], key: { keyId: string; workspaceId: string }) =>
  Effect.gen(function*() {
    let admitted = 0
    for (;;) {
      const reserved = yield* Effect.exit(accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 100n, byok: false }))
      if (reserved._tag === "Failure") return admitted
      yield* accounting.settle(reserved.value, settleRequest(Crypto.randomUUID(), 100n))
      admitted++
    }
  })

const holdCount = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return (yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM holds`)[0]!.n
})

const reserve = (accounting: Accounting["Service"], key: { keyId: string; workspaceId: string }) =>
  accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 100n, byok: false })

describe.skipIf(storeKind !== "postgres")("a ledger write when PostgreSQL flickers: an answer iff a row", () => {
  it.live("a write that commits but whose answer is lost is read back: the request is settled with its row, and the lease is read again", () =>
    withFlicker({ resolveWithinMs: 20_000 }, ({ accounting, relay }) =>
      Effect.gen(function*() {
        const key = yield* seedKey({ limitNanos: 1000n })
        const first: Reservation = yield* reserve(accounting, key)
        relay.dropAnswers()
        const generation = Crypto.randomUUID()
        const settling = yield* Effect.forkChild(Effect.exit(accounting.settle(first, settleRequest(generation, 100n))))
        // The statement reaches PostgreSQL and commits; its answer never comes back.
        const sql = yield* SqlClient.SqlClient
        for (let i = 0; i < 100 && (yield* sql`SELECT 1 FROM ledger WHERE generation_id = ${generation}`).length === 0; i++) {
          yield* Effect.sleep("20 millis")
        }
        yield* Effect.promise(() => relay.cut())
        yield* Effect.sleep("700 millis")
        yield* Effect.promise(() => relay.open())
        const settled = yield* Fiber.join(settling)
        assert.strictEqual(settled._tag, "Success", "the committed row is found, so the request is answered with it")
        if (settled._tag === "Success") assert.strictEqual(settled.value.costNanos, 100n)
        // The in-memory lease follows the store: the limit admits exactly nine more.
        assert.strictEqual(yield* spendTheRest(accounting, key), 9)
        const sums = yield* ledgerSums(key.keyId)
        assert.deepStrictEqual(sums, { total: 1000n, paid: 1000n, rows: 10 })
      })), 60_000)

  it.live("a write that never reached the store is read back once it answers: no row, the request fails (503) and is not charged", () =>
    withFlicker({ resolveWithinMs: 20_000 }, ({ accounting, relay }) =>
      Effect.gen(function*() {
        const key = yield* seedKey({ limitNanos: 1000n })
        const first = yield* reserve(accounting, key)
        yield* Effect.promise(() => relay.cut())
        const settling = yield* Effect.forkChild(Effect.exit(accounting.settle(first, settleRequest(Crypto.randomUUID(), 100n))))
        // The read-back is tried again while the store is away, and answers once it is back.
        yield* Effect.sleep("1500 millis")
        assert.isUndefined(settling.pollUnsafe(), "the request waits for the outcome rather than guessing it")
        yield* Effect.promise(() => relay.open())
        const settled = yield* Fiber.join(settling)
        assert.strictEqual(settled._tag, "Failure")
        if (settled._tag === "Failure") assert.include(JSON.stringify(settled.cause), "StoreUnavailable")
        assert.deepStrictEqual(yield* ledgerSums(key.keyId), { total: 0n, paid: 0n, rows: 0 })
        // Not charged: the whole limit is still there.
        assert.strictEqual(yield* spendTheRest(accounting, key), 10)
      })), 60_000)
})

describe.skipIf(storeKind !== "postgres")("a lease that could not be handed back", () => {
  it.live("stays owned while PostgreSQL is away and is handed back once it answers, not left to its ten-minute expiry", () =>
    withFlicker({ idleReturn: "300 millis" }, ({ accounting, relay }) =>
      Effect.gen(function*() {
        const key = yield* seedKey({ limitNanos: 10_000n })
        const reserved = yield* reserve(accounting, key)
        yield* accounting.settle(reserved, settleRequest(Crypto.randomUUID(), 100n))
        yield* Effect.promise(() => relay.cut())
        // Idle, and its hand-back fails: the row stays in the store.
        yield* Effect.sleep("1500 millis")
        assert.strictEqual(yield* holdCount, 1)
        yield* Effect.promise(() => relay.open())
        const back = Date.now()
        while ((yield* holdCount) > 0 && Date.now() - back < 10_000) yield* Effect.sleep("50 millis")
        assert.strictEqual(yield* holdCount, 0, "handed back once the store answered")
        assert.isBelow(Date.now() - back, 10_000)
      })), 60_000)
})
