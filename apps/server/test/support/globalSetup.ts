import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import * as PgliteInit from "../../src/store/PgliteInit.ts"

/**
 * Initialises one empty PGlite directory for the whole run; test servers copy it instead of
 * running `initdb` (seconds) in every test file. It is made the way the server makes one (initdb in
 * a child process), which also keeps initdb's memory out of the test runner.
 */
export default async function setup() {
  const root = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-template-"))
  const dir = NodePath.join(root, "pglite")
  await PgliteInit.ensureDataDir(dir)
  process.env.SWITCHYARD_TEST_PGLITE_TEMPLATE = dir
  // Required with DATABASE_URL (replicas share it); the test servers and processes inherit it.
  process.env.SWITCHYARD_SECRET_KEY ??= Crypto.randomBytes(32).toString("base64")
  // Every PostgreSQL database a test makes carries the run's mark (TestServer.freshDatabase).
  const run = Crypto.randomBytes(4).toString("hex")
  process.env.SWITCHYARD_TEST_RUN = run
  return async () => {
    Fs.rmSync(root, { recursive: true, force: true })
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
