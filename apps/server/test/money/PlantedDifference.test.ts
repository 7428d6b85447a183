/**
 * The property suite catches a drift between the stores: each store's real code with ONE
 * comparison changed (a grant refused at a key limit when what it needs equals the room left,
 * `>=` for `>`) must make the property fail with a shrunk counterexample and the seed to replay
 * it. SQLite: a copy of `SqliteMoneyStore.ts` with that one line changed, loaded beside the
 * tests. PostgreSQL: the same comparison changed in `switchyard_lease` in a scratch database.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as fc from "fast-check"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as MoneyFunctions from "../../src/store/money/MoneyFunctions.ts"
import type { MoneyStore } from "../../src/store/money/MoneyStorePort.ts"
import * as MoneyStoreLive from "../../src/store/money/MoneyStore.ts"
import { pgClockLayer, sameAsModel, scenario, type StoreUnderTest } from "../support/MoneyProperty.ts"
import { sqlLayer } from "../support/MoneyStore.ts"
import { storeKind } from "../support/TestServer.ts"

const storeDir = NodePath.join(import.meta.dirname, "..", "..", "src", "store", "money")

/** Changes `from` to `to` in `text`, exactly once (a plant that changes nothing, or two things, is a broken test). */
const plant = (text: string, from: RegExp, to: string): string => {
  const found = text.match(new RegExp(from.source, `${from.flags.replace("g", "")}g`)) ?? []
  assert.strictEqual(found.length, 1, `the planted comparison ${from} is found exactly once`)
  return text.replace(from, to)
}

/**
 * `SqliteMoneyStore.ts` with the key limit's comparison in a grant changed, written next to the
 * tests (its imports pointed back at the store's folder), loaded, and removed again.
 */
const plantedSqlite = Effect.promise(async () => {
  const source = Fs.readFileSync(NodePath.join(storeDir, "SqliteMoneyStore.ts"), "utf8")
  const planted = plant(source, /if \(r\.ask\.need > room\) return refused\("key_limit"/u, `if (r.ask.need >= room) return refused("key_limit"`)
  const dir = NodePath.join(import.meta.dirname, "..", ".planted")
  const pointed = planted.replaceAll(/from "(\.{1,2}\/[^"]+)"/gu, (_, path: string) => `from "${NodePath.relative(dir, NodePath.resolve(storeDir, path))}"`)
  Fs.mkdirSync(dir, { recursive: true })
  const file = NodePath.join(dir, `SqliteMoneyStore-${Crypto.randomUUID().slice(0, 8)}.ts`)
  Fs.writeFileSync(file, pointed)
  try {
    return (await import(file)) as { readonly make: (sql: SqlClient.SqlClient) => Effect.Effect<MoneyStore> }
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
})

/** `switchyard_lease` with the same comparison changed, replacing the real one in a scratch database. */
const plantedLease = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const lease = MoneyFunctions.all.find((f) => f.name === "switchyard_lease")!
  yield* sql.unsafe(plant(MoneyFunctions.definition(lease), /IF p_need > v_room THEN(\s+)o_outcome := 'key_limit'/u, "IF p_need >= v_room THEN$1o_outcome := 'key_limit'"))
})

/** Runs the property on one store until it fails (a fixed seed: the same sequences every run). */
const catches = (store: StoreUnderTest) =>
  Effect.gen(function*() {
    const result = yield* Effect.promise(() => fc.check(fc.asyncProperty(scenario(), (s) => sameAsModel(s, [store])), { numRuns: 500, seed: 44 }))
    assert.isTrue(result.failed, `the planted difference in ${store.name} is caught within 500 sequences`)
    const report = fc.defaultReportMessage(result) ?? ""
    assert.match(report, /seed: -?\d+, path: "[\d:]+"/u, "the report gives the seed and path that replay it")
    assert.match(report, /Counterexample: /u)
    assert.match(report, /Shrunk \d+ time/u, "the counterexample was shrunk")
    // What was caught is the plant: a grant the model allows at exactly the room left.
    assert.match(String(result.errorInstance), /an answer differs from the model's/u)
    const [shrunk] = result.counterexample!
    assert.isTrue(shrunk.ops.some((o) => o.op === "grant"), "the shrunk sequence holds the grant that differs")
    assert.isAtMost(shrunk.ops.length, 3, `shrunk to a few operations: ${JSON.stringify(shrunk.ops)}`)
  })

describe("a planted one-line difference in a store is caught by the property", () => {
  it.effect("SQLite: a key limit compared with >= instead of > in a grant", () =>
    Effect.gen(function*() {
      const planted = yield* plantedSqlite
      const context = yield* Layer.build(sqlLayer("sqlite"))
      yield* catches({ name: "sqlite (planted)", context, make: Effect.flatMap(SqlClient.SqlClient, planted.make) })
    }).pipe(Effect.scoped), { timeout: 300_000 })

  it.effect.skipIf(storeKind !== "postgres")("PostgreSQL: the same comparison changed in switchyard_lease", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(pgClockLayer(plantedLease))
      yield* catches({ name: "postgres (planted)", context, make: MoneyStoreLive.make })
    }).pipe(Effect.scoped), { timeout: 300_000 })
})
