import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as Crypto from "node:crypto"

/**
 * What every test process shares: one secret key for the run. It is required with DATABASE_URL
 * (replicas share it); the test servers and processes inherit it.
 */
export default function setup() {
  process.env.SWITCHYARD_SECRET_KEY ??= Crypto.randomBytes(32).toString("base64")
  // Every PostgreSQL database a test makes carries the run's mark (TestServer.freshDatabase).
  const run = Crypto.randomBytes(4).toString("hex")
  process.env.SWITCHYARD_TEST_RUN = run
  return async () => {
    if (process.env.SWITCHYARD_TEST_STORE === "postgres") await dropLeftDatabases(run)
  }
}

/** Drops the databases of this run that are still there, then fails the run naming them. */
const dropLeftDatabases = (run: string) =>
  Effect.runPromise(Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const left = (yield* sql<{ name: string }>`SELECT datname AS name FROM pg_database WHERE datname LIKE ${`switchyard_test_${run}_%`}`)
      .map((r) => r.name)
    for (const name of left) yield* sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    if (left.length > 0) yield* Effect.die(new Error(`the tests left ${left.length} PostgreSQL databases (dropped now): ${left.join(", ")}`))
  }).pipe(Effect.provide(PgClient.layer({
    url: Redacted.make(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"),
    maxConnections: 1
  }))))
