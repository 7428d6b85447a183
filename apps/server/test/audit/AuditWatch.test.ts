import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { call, freshDatabase, dropDatabase, type RunningServer, startServer, storeKind, tempDir } from "../support/TestServer.ts"
import { dropAppendOnly } from "../support/AuditGuard.ts"
import { capturingStdout } from "../support/CapturedOutput.ts"

const waitFor = async <A>(what: string, read: () => Promise<A>, done: (a: A) => boolean, withinMs: number): Promise<A> => {
  const deadline = Date.now() + withinMs
  for (;;) {
    const seen = await read()
    if (done(seen)) return seen
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${withinMs} ms: ${JSON.stringify(seen)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const metric = async (server: RunningServer) =>
  /^switchyard_audit_chain_ok (\d)$/mu.exec(await (await fetch(`${server.origin}/metrics`)).text())?.[1]

describe(`the audit chain checked without asking (${storeKind})`, () => {
  const dataDir = tempDir("audit-watch")
  let databaseUrl: string | undefined
  let server: RunningServer
  const env = { SWITCHYARD_AUDIT_VERIFY_S: "1" }
  beforeAll(async () => {
    databaseUrl = storeKind === "postgres" ? await freshDatabase() : undefined
    server = await startServer({ env, dataDir, ...(databaseUrl !== undefined ? { databaseUrl } : {}) })
  })
  afterAll(async () => {
    await server?.close()
    if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
  })

  it("a hand-changed entry is found within an interval while running and within 5 s of a start: metric 0, health degraded, listing flags it", async () => {
    const operator = server.managementKey
    for (let i = 0; i < 4; i++) assert.strictEqual((await call(server, "POST", "/keys", operator, { name: `k${i}` })).status, 201)
    // Whole, and said so once the next round has checked the new entries.
    const listed = await waitFor(
      "the entries checked",
      async () => (await call(server, "GET", "/audit-log", operator)).body.data as Array<{ id: number; verified: boolean | null }>,
      (entries) => entries.length === 4 && entries.every((e) => e.verified === true),
      5_000
    )
    assert.strictEqual(listed.length, 4)
    assert.strictEqual(await metric(server), "1")
    const healthy = await call(server, "GET", "/health", operator)
    assert.deepStrictEqual([healthy.body.status, healthy.body.checks.audit], ["ok", { status: "ok" }])

    // A database owner drops the guard and changes the second entry.
    await server.run(dropAppendOnly)
    await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE audit_log SET action = 'key.forged' WHERE id = 2`))
    await waitFor("the break reported while running", () => metric(server), (m) => m === "0", 5_000)
    const degraded = await call(server, "GET", "/health", operator)
    assert.strictEqual(degraded.status, 200, "serving goes on")
    assert.deepStrictEqual([degraded.body.status, degraded.body.checks.audit], ["degraded", { status: "broken", first_broken: { id: 2, reason: "hash_mismatch" } }])
    const flagged = (await call(server, "GET", "/audit-log", operator)).body.data as Array<{ id: number; verified: boolean | null }>
    for (const entry of flagged) assert.strictEqual(entry.verified, entry.id >= 2 ? false : true, `entry ${entry.id}`)

    // Restarted on the same store: found again within 5 s of the start.
    await server.close()
    const started = Date.now()
    const { lines } = await capturingStdout(async () => {
      server = await startServer({ env: { SWITCHYARD_AUDIT_VERIFY_S: "300", SWITCHYARD_LOG_FORMAT: "json" }, dataDir, ...(databaseUrl !== undefined ? { databaseUrl } : {}) })
      await waitFor("the break reported after a start", () => metric(server), (m) => m === "0", 5_000)
    })
    assert.isBelow(Date.now() - started, 5_000)
    // The error line names the entry.
    assert.deepInclude(lines.find((l) => String(l.message).includes("audit log: the chain is broken")), { level: "error", audit_entry: 2 })
    assert.strictEqual((await call(server, "GET", "/health", operator)).body.checks.audit.first_broken.id, 2)
  })
})
