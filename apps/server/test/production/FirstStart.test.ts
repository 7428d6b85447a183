import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Net from "node:net"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { launch } from "../support/BundleProcess.ts"
import { freePort } from "../support/ServerProcess.ts"
import { dropDatabase, freshDatabase, postgresReachable, tempDir } from "../support/TestServer.ts"

const reachable = await postgresReachable()

/**
 * Holds, from its own session, the advisory lock under which the gateway makes the first-start
 * keys (Bootstrap.ts): the gateway's first start stops right there, with its socket open.
 */
const holdBootstrapLock = async (url: string) => {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let locked!: () => void
  const isLocked = new Promise<void>((resolve) => (locked = resolve))
  const held = Effect.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`SELECT pg_advisory_lock(7031)`
    locked()
    yield* Effect.promise(() => released)
  }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))))
  await Promise.race([isLocked, held])
  return async () => {
    release()
    await held
  }
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = Net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

// Under CI an unreachable PostgreSQL is a failure, not a reason to skip.
describe.skipIf(!reachable && process.env.CI !== "true")("the first start (production bundle, PostgreSQL)", () => {
  it("a request that arrives after the socket opened but before the first-start keys exist waits for them, and is served with them", async () => {
    const url = await freshDatabase()
    const unlock = await holdBootstrapLock(url)
    const managementKey = KeySecret.generate()
    const port = await freePort()
    const gateway = launch({
      SWITCHYARD_HOST: "127.0.0.1",
      SWITCHYARD_PORT: String(port),
      SWITCHYARD_DATA_DIR: tempDir("first-start"),
      DATABASE_URL: url,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey
    })
    try {
      const deadline = Date.now() + 240_000
      while (!(await portOpen(port))) {
        assert.isTrue(gateway.isRunning(), gateway.stdout() + gateway.stderr())
        assert.isBelow(Date.now(), deadline, "the port never opened")
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const reply = fetch(`http://127.0.0.1:${port}/api/v1/keys`, { headers: { authorization: `Bearer ${managementKey}` } })
        .then(async (r) => ({ status: r.status, body: await r.text() }))
      const early = await Promise.race([reply, new Promise<"waiting">((resolve) => setTimeout(() => resolve("waiting"), 1_000))])
      assert.strictEqual(early, "waiting", "answered before the first-start keys existed")
      await unlock()
      const answered = await reply
      assert.strictEqual(answered.status, 200, answered.body)
      assert.include(answered.body, "Bootstrap management key")
    } finally {
      await unlock()
      await gateway.stop()
      await dropDatabase(url)
    }
  }, 300_000)
})
