import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { call, type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

describe(`credits over HTTP (${storeKind})`, () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("a fresh workspace has no credits; grants add up exactly and are recorded", async () => {
    const fresh = await call(server, "GET", "/credits", server.managementKey)
    assert.deepStrictEqual(fresh, { status: 200, body: { data: { total_credits: 0, total_usage: 0 } } })
    for (const amount of ["0.1", 0.2, "0.000000001"]) {
      assert.strictEqual((await call(server, "POST", "/credits", server.managementKey, { amount, note: "top-up" })).status, 200)
    }
    const after = await call(server, "GET", "/credits", server.managementKey)
    assert.strictEqual(after.body.data.total_credits, 0.300000001)
    const grants = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ total: string; n: number }>`SELECT CAST(SUM(amount_nanos) AS text) AS total, CAST(count(*) AS integer) AS n FROM credit_grants`
    }))
    assert.deepStrictEqual(grants[0], { total: "300000001", n: 3 })
  })

  it("refuses amounts that are not positive exact credits", async () => {
    for (const amount of [0, -1, "-1", "1e3", "0.0000000001", "abc", 1e10, null]) {
      const response = await call(server, "POST", "/credits", server.managementKey, { amount })
      assert.strictEqual(response.status, 400, JSON.stringify(amount))
      assert.strictEqual(response.body.error.code, 400)
      assert.include(response.body.error.message, "amount")
    }
  })

  it("requires a management key and a workspace the user belongs to", async () => {
    assert.strictEqual((await call(server, "GET", "/credits", server.apiKey)).status, 403)
    assert.strictEqual((await call(server, "POST", "/credits", server.apiKey, { amount: 1 })).status, 403)
    const foreign = await call(server, "POST", "/credits", server.managementKey, { amount: 1, workspace_id: "00000000-0000-4000-8000-000000000000" })
    assert.strictEqual(foreign.status, 404)
    assert.strictEqual((await call(server, "GET", "/credits?workspace_id=nope", server.managementKey)).status, 400)
  })
})
