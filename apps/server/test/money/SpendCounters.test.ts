import { PgClient } from "@effect/sql-pg"
import { assert, describe, layer } from "@effect/vitest"
import { Accounting } from "@switchyard/core/store/Accounting"
import { Array as Arr, Effect, Layer, Redacted, Result } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as AccountingLive from "../../src/store/money/AccountingLive.ts"
import { migrate, migrations } from "../../src/store/database/Migrations.ts"
import { atTime, refusal, seedKey, storeSupport } from "../support/MoneyStore.ts"
import { dropDatabase, freshDatabase, storeKind } from "../support/TestServer.ts"

/**
 * An empty, unmigrated PostgreSQL database: the test decides which migrations run. PostgreSQL keeps
 * its migration history; a SQLite store starts from the baseline (test/store/SqliteSchema.test.ts).
 */
const driver = Layer.unwrap(Effect.gen(function*() {
    const url = yield* Effect.acquireRelease(Effect.promise(() => freshDatabase()), (url) => Effect.promise(() => dropDatabase(url)))
    return PgClient.layer({ url: Redacted.make(url), maxConnections: 8 }) as Layer.Layer<SqlClient.SqlClient, unknown>
  }))

const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0004"))
const migrateBefore = Migrator.make({})({ loader: Migrator.fromRecord(before), table: "switchyard_migrations" })

/** The counters as the ledger says they must be: per key, per UTC day and all-time. */
const expectedFromLedger = (keyId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ day: string; spent: string; byok: string }>`SELECT day::text AS day, spent::text AS spent, byok::text AS byok FROM (
        SELECT (created_at AT TIME ZONE 'UTC')::date AS day,
          SUM(cost_nanos) FILTER (WHERE NOT is_byok) AS spent, SUM(cost_nanos) FILTER (WHERE is_byok) AS byok
        FROM ledger WHERE key_id = ${keyId} AND cost_nanos > 0 GROUP BY 1
        UNION ALL
        SELECT '-infinity'::date, SUM(cost_nanos) FILTER (WHERE NOT is_byok), SUM(cost_nanos) FILTER (WHERE is_byok)
        FROM ledger WHERE key_id = ${keyId} AND cost_nanos > 0 HAVING count(*) > 0
      ) t ORDER BY day`.pipe(
      Effect.map((rows) => rows.map((r) => ({ day: r.day, spent: r.spent ?? "0", byok: r.byok ?? "0" })))
    )
  }).pipe(Effect.orDie)

const counters = (keyId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ day: string; spent: string; byok: string }>`SELECT day::text AS day, spent_nanos::text AS spent,
        byok_nanos::text AS byok FROM key_spend WHERE key_id = ${keyId} ORDER BY day`
  }).pipe(Effect.orDie)

const ledgerRow = (keyId: string, workspaceId: string, at: string, cost: bigint, byok: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos,
        is_byok, created_at)
      VALUES (${`gen-${Crypto.randomUUID()}`}, ${keyId}, ${workspaceId}, 'test/embed', 'test', 1, 1, ${cost.toString()}::bigint,
        ${byok}, ${new Date(at)})`
  }).pipe(Effect.orDie)

describe.skipIf(storeKind !== "postgres")("PostgreSQL's migration history", () => {
  layer(driver, { timeout: 120_000, excludeTestServices: true })(`spend counters (${storeKind})`, (it) => {
    it.effect("the migration backfills the counters from the ledger, and the limit counts them at once", () =>
      Effect.gen(function*() {
        yield* migrateBefore
        const key = yield* seedKey({ limitNanos: 1_000n, limitReset: "monthly", includeByokInLimit: true })
        const other = yield* seedKey({ limitNanos: 100n })
        yield* ledgerRow(key.keyId, key.workspaceId, "2030-04-30T23:59:59.999Z", 500n, false)
        yield* ledgerRow(key.keyId, key.workspaceId, "2030-05-01T00:00:00Z", 300n, false)
        yield* ledgerRow(key.keyId, key.workspaceId, "2030-05-01T10:00:00Z", 50n, true)
        yield* ledgerRow(key.keyId, key.workspaceId, "2030-05-02T10:00:00Z", 0n, false)
        yield* ledgerRow(key.keyId, key.workspaceId, "2030-05-02T11:00:00Z", 9_223_372_036_854_775n, true)
        yield* ledgerRow(other.keyId, other.workspaceId, "2030-05-02T11:00:00Z", 60n, false)
        yield* migrate
        assert.deepStrictEqual(yield* counters(key.keyId), [
          { day: "-infinity", spent: "800", byok: "9223372036854825" },
          { day: "2030-04-30", spent: "500", byok: "0" },
          { day: "2030-05-01", spent: "300", byok: "50" },
          { day: "2030-05-02", spent: "0", byok: "9223372036854775" }
        ])
        assert.deepStrictEqual(yield* counters(key.keyId), yield* expectedFromLedger(key.keyId))
        assert.deepStrictEqual(yield* counters(other.keyId), yield* expectedFromLedger(other.keyId))

        yield* Effect.gen(function*() {
          const accounting = yield* Accounting
          yield* accounting.addCredits({ workspaceId: other.workspaceId, amountNanos: 1_000n, note: null, grantedByKeyId: null })
          const refused = yield* refusal(
            accounting.reserve({ keyId: other.keyId, workspaceId: other.workspaceId, amountNanos: 41n, byok: false })
          )
          assert.strictEqual(refused.metadata?.reason, "key_limit")
          assert.strictEqual(refused.metadata?.limit_remaining, 40e-9)
          yield* accounting.release(
            yield* accounting.reserve({ keyId: other.keyId, workspaceId: other.workspaceId, amountNanos: 40n, byok: false })
          )
        }).pipe(Effect.provide(AccountingLive.layer), Effect.provide(storeSupport))
      }))

    it.effect("settlements keep the counters equal to the ledger, across days, BYOK, caps and duplicates", () =>
      Effect.andThen(migrate, Effect.gen(function*() {
        const accounting = yield* Accounting
        const key = yield* seedKey({ limitNanos: 10_000n, limitReset: "daily", includeByokInLimit: true })
        yield* accounting.addCredits({ workspaceId: key.workspaceId, amountNanos: 1_000_000n, note: null, grantedByKeyId: null })
        const days = ["2030-07-01T08:00:00Z", "2030-07-01T23:59:59.999Z", "2030-07-02T00:00:00Z"]
        const results = yield* Effect.forEach(
          Arr.range(0, 59),
          (i) =>
            Effect.gen(function*() {
              const byok = i % 4 === 0
              const r = yield* accounting.reserve({ keyId: key.keyId, workspaceId: key.workspaceId, amountNanos: 300n, byok })
              const generationId = `gen-counters-${i}`
              // Every fifth request costs more than it held (capped at the room left); some settle twice.
              const cost = i % 5 === 0 ? 900n : BigInt(100 + i)
              yield* accounting.settle(r, { generationId, model: "m/m", provider: "p", promptTokens: 1, totalTokens: 1, costNanos: cost, isByok: byok })
              if (i % 7 === 0) {
                yield* accounting.settle(r, { generationId, model: "m/m", provider: "p", promptTokens: 1, totalTokens: 1, costNanos: cost, isByok: byok })
              }
            }).pipe(atTime(Date.parse(days[i % days.length]!)), Effect.result),
          { concurrency: 16 }
        )
        assert.isAbove(results.filter(Result.isSuccess).length, 0)
        const expected = yield* expectedFromLedger(key.keyId)
        assert.deepStrictEqual(yield* counters(key.keyId), expected)
        assert.strictEqual(expected.length, 3)
        for (const day of expected.filter((d) => d.day !== "-infinity")) {
          assert.isTrue(BigInt(day.spent) + BigInt(day.byok) <= 10_000n, `the daily limit held on ${day.day}`)
        }
      }).pipe(Effect.provide(AccountingLive.layer), Effect.provide(storeSupport))))
  })
})
