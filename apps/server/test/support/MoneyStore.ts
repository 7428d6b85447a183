import { PgClient } from "@effect/sql-pg"
import type { LimitReset } from "@switchyard/core/schema/ApiKey"
import { refusalToApiError } from "@switchyard/core/errors/Refusal"
import type { Refused } from "@switchyard/core/store/Accounting"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Clock, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as Database from "../../src/store/database/Database.ts"
import { InFlight } from "../../src/store/money/InFlight.ts"
import { StoreChanges } from "../../src/store/sql/StoreChanges.ts"
import { StoreStatements } from "../../src/store/sql/StoreStatements.ts"
import { migrate } from "../../src/store/database/Migrations.ts"
import * as SqliteClient from "../../src/store/sqlite/SqliteClient.ts"
import { dropDatabase, freshDatabase, storeKind } from "./TestServer.ts"

/** The stores a money suite can run on: the suites' default (`storeKind`) or SQLite. */
export type MoneyStoreKind = typeof storeKind | "sqlite"

/**
 * The stores the money suites run on, each once: SQLite (the default), and PostgreSQL beside it
 * under `SWITCHYARD_TEST_STORE=postgres`.
 */
export const moneyStores: ReadonlyArray<MoneyStoreKind> = storeKind === "postgres" ? ["postgres", "sqlite"] : ["sqlite"]

/**
 * A migrated, empty store for one suite: in-memory SQLite, or a fresh PostgreSQL database (dropped
 * afterwards) under `SWITCHYARD_TEST_STORE=postgres`, or a SQLite file (`file`: several clients on
 * one file stand for several worker processes).
 */
export const sqlLayer = (kind: MoneyStoreKind = storeKind, file?: string): Layer.Layer<Database.StoreServices, unknown> => {
  const driver = kind === "postgres"
    ? Layer.unwrap(Effect.gen(function*() {
      const url = yield* Effect.acquireRelease(Effect.promise(() => freshDatabase()), (url) => Effect.promise(() => dropDatabase(url)))
      return PgClient.layer({ url: Redacted.make(url), maxConnections: 16 }) as Layer.Layer<SqlClient.SqlClient, unknown>
    }))
    : SqliteClient.layer(file ?? ":memory:") as Layer.Layer<SqlClient.SqlClient, unknown>
  return Database.support(Layer.effectDiscard(migrate).pipe(Layer.provideMerge(driver)))
}

/** Which store the client of a test runs on. */
export const dialect = Effect.map(SqlClient.SqlClient, (sql) => sql.onDialectOrElse({ sqlite: () => "sqlite" as const, orElse: () => "pg" as const }))

interface SeededKey {
  readonly workspaceId: string
  readonly userId: string
  readonly keyId: string
  readonly hash: string
}

/**
 * A workspace with one user and one standard key with the given limit settings.
 */
export const seedKey = (options: {
  readonly limitNanos?: bigint | null
  readonly limitReset?: LimitReset | null
  readonly includeByokInLimit?: boolean
  readonly workspaceId?: string
  readonly userId?: string
} = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const workspaceId = options.workspaceId ?? Crypto.randomUUID()
    const userId = options.userId ?? Crypto.randomUUID()
    if (options.workspaceId === undefined) {
      yield* sql`INSERT INTO workspaces (id, slug, name) VALUES (${workspaceId}, ${`ws-${workspaceId}`}, 'Test')`
    }
    if (options.userId === undefined) {
      yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES (${userId}, 'tester', ${workspaceId})`
      yield* sql`INSERT INTO memberships (user_id, workspace_id, role) VALUES (${userId}, ${workspaceId}, 'owner')`
    }
    const keyId = Crypto.randomUUID()
    const hash = KeySecret.hash(KeySecret.generate())
    const limit = options.limitNanos ?? null
    yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id, limit_nanos, limit_reset, include_byok_in_limit)
      VALUES (${keyId}, ${hash}, 'standard', 'test key', 'sk-sy-v1-...', ${userId}, ${workspaceId},
        CAST(${limit === null ? null : limit.toString()} AS bigint), ${options.limitReset ?? null}, ${options.includeByokInLimit ?? false})`
    return { workspaceId, userId, keyId, hash } satisfies SeededKey
  }).pipe(Effect.orDie)

/**
 * The ledger's sums for a key: everything, and the non-BYOK part.
 */
export const ledgerSums = (keyId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ total: string; paid: string; n: number }>`SELECT CAST(COALESCE(SUM(cost_nanos), 0) AS text) AS total,
        CAST(COALESCE(SUM(CASE WHEN is_byok THEN 0 ELSE cost_nanos END), 0) AS text) AS paid, CAST(count(*) AS integer) AS n
      FROM ledger WHERE key_id = ${keyId}`
    return { total: BigInt(rows[0]!.total), paid: BigInt(rows[0]!.paid), rows: Number(rows[0]!.n) }
  }).pipe(Effect.orDie)

export const nanos = (credits: string): bigint => {
  const [whole, fraction = ""] = credits.split(".")
  return BigInt(whole!) * 1_000_000_000n + BigInt(fraction.padEnd(9, "0"))
}

/** What the edge answers for a refusal, as the money suites have always checked it. */
export const edge = (error: Refused | StoreUnavailable) => {
  if (error._tag !== "Refused") throw new Error(`expected a refusal, got ${error._tag}`)
  return refusalToApiError(error)
}
export const refusal = <A>(self: Effect.Effect<A, Refused | StoreUnavailable>) => Effect.map(Effect.flip(self), edge)


/**
 * A clock the test sets: the money port reads the time from the Effect `Clock` it runs with (the
 * layer's own fibers keep the real one).
 */
const settableClock = (real: Clock.Clock) => {
  let nowMillis = 0
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: () => nowMillis,
    currentTimeMillis: Effect.sync(() => nowMillis),
    currentTimeNanosUnsafe: () => BigInt(nowMillis) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(nowMillis) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: real.monotonicTimeNanos,
    sleep: (d) => real.sleep(d)
  }
  return {
    clock,
    set: (ms: number) =>
      Effect.sync(() => {
        nowMillis = ms
      })
  }
}

/** Runs a test body on a settable clock. */
export const onClock = <A, E, R>(body: (setTime: (ms: number) => Effect.Effect<void>) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Clock.Clock, (real) => {
    const { clock, set } = settableClock(real)
    return body(set).pipe(Effect.provideService(Clock.Clock, clock))
  })


/**
 * The statement counter and change notices a money port needs, for a test that builds one beside
 * a server's or a bare store's SQL client.
 */
export const storeSupport = Layer.mergeAll(StoreChanges.layer, StoreStatements.layer, InFlight.layer)

/** Runs an effect on a clock stopped at `ms` (the layer's own fibers keep the real one). */
export const atTime = (ms: number) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  onClock((setTime) => Effect.andThen(setTime(ms), self))
