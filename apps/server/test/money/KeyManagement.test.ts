import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as AccountingLive from "../../src/store/money/AccountingLive.ts"
import { storeSupport } from "../support/MoneyStore.ts"
import { call, type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

interface KeyRecord {
  readonly hash: string
  readonly name: string
  readonly disabled: boolean
  readonly limit: number | null
  readonly limit_remaining: number | null
  readonly limit_reset: string | null
  readonly usage: number
  readonly usage_daily: number
  readonly byok_usage: number
  readonly expires_at: string | null
  readonly workspace_id: string
  readonly external_user: string | null
  readonly creator_user_id: string | null
}

describe(`key management over HTTP (${storeKind})`, () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("POST /keys answers 201 with the secret once; the listing and GET show the record without it", async () => {
    const created = await call(server, "POST", "/keys", server.managementKey, {
      name: "ci", limit: 0.000000123, limit_reset: "daily", external: { user: "customer-7" }
    })
    assert.strictEqual(created.status, 201)
    const secret = created.body.key as string
    const record = created.body.data as KeyRecord
    assert.strictEqual(record.limit, 0.000000123)
    assert.strictEqual(record.limit_remaining, 0.000000123)
    assert.strictEqual(record.external_user, "customer-7")
    const listed = await call(server, "GET", "/keys", server.managementKey)
    const found = (listed.body.data as Array<KeyRecord>).find((k) => k.hash === record.hash)
    assert.deepStrictEqual(found, record)
    const got = await call(server, "GET", `/keys/${record.hash}`, server.managementKey)
    assert.deepStrictEqual(got.body.data, record)
    assert.notInclude(JSON.stringify([listed.body, got.body]), secret)
    const own = await call(server, "GET", "/key", secret)
    assert.strictEqual(own.status, 200)
    assert.strictEqual(own.body.data.hash, record.hash)
    assert.strictEqual(own.body.data.is_management_key, false)
  })

  it("refuses bad bodies with 400 naming the field", async () => {
    const cases: Array<[unknown, string]> = [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "x", limit: -1 }, "limit"],
      [{ name: "x", limit: "1" }, "limit"],
      [{ name: "x", limit_reset: "yearly" }, "limit_reset"],
      [{ name: "x", expires_at: "tomorrow" }, "expires_at"],
      [{ name: "x", expires_at: "2001-01-01T00:00:00Z" }, "expires_at"],
      [{ name: "x", creator_user_id: "someone-else" }, "creator_user_id"],
      [{ name: "x", workspace_id: "not-a-uuid" }, "workspace_id"],
      [{ name: "x", external: { user: "u", api_key: "k" } }, "external.api_key"]
    ]
    for (const [body, field] of cases) {
      const response = await call(server, "POST", "/keys", server.managementKey, body)
      assert.strictEqual(response.status, 400, JSON.stringify(body))
      assert.strictEqual(response.body.error.code, 400)
      assert.include(response.body.error.message, field, JSON.stringify(body))
    }
    const foreign = await call(server, "POST", "/keys", server.managementKey, { name: "x", workspace_id: "00000000-0000-4000-8000-000000000000" })
    assert.strictEqual(foreign.status, 404)
  })

  it("PATCH changes only the fields sent; null clears the limit; unknown hashes are 404", async () => {
    const created = await call(server, "POST", "/keys", server.managementKey, { name: "patchable", limit: 2, limit_reset: "monthly" })
    const hash = created.body.data.hash as string
    const renamed = await call(server, "PATCH", `/keys/${hash}`, server.managementKey, { name: "renamed" })
    assert.strictEqual(renamed.status, 200)
    assert.deepStrictEqual([renamed.body.data.name, renamed.body.data.limit, renamed.body.data.limit_reset], ["renamed", 2, "monthly"])
    const cleared = await call(server, "PATCH", `/keys/${hash}`, server.managementKey, { limit: null, limit_reset: null, include_byok_in_limit: true })
    assert.deepStrictEqual([cleared.body.data.limit, cleared.body.data.limit_reset, cleared.body.data.include_byok_in_limit], [null, null, true])
    for (const path of [`/keys/${"0".repeat(64)}`, "/keys/nonsense"]) {
      assert.strictEqual((await call(server, "PATCH", path, server.managementKey, { name: "x" })).status, 404)
      assert.strictEqual((await call(server, "GET", path, server.managementKey)).status, 404)
      assert.strictEqual((await call(server, "DELETE", path, server.managementKey)).status, 404)
    }
  })

  it("a management key cannot disable or delete itself, and a standard key cannot manage keys", async () => {
    const self = await call(server, "GET", "/key", server.managementKey)
    const hash = self.body.data.hash as string
    assert.strictEqual((await call(server, "PATCH", `/keys/${hash}`, server.managementKey, { disabled: true })).status, 400)
    assert.strictEqual((await call(server, "DELETE", `/keys/${hash}`, server.managementKey)).status, 400)
    for (const [method, path] of [["POST", "/keys"], ["GET", `/keys/${hash}`], ["PATCH", `/keys/${hash}`], ["DELETE", `/keys/${hash}`]] as const) {
      const response = await call(server, method, path, server.apiKey, method === "GET" || method === "DELETE" ? undefined : { name: "x" })
      assert.strictEqual(response.status, 403, `${method} ${path}`)
      assert.strictEqual(response.body.error.code, 403)
    }
  })

  it("a deleted key stops authenticating at once and leaves the listing, and its ledger rows stay", async () => {
    const created = await call(server, "POST", "/keys", server.managementKey, { name: "doomed" })
    const secret = created.body.key as string
    const hash = created.body.data.hash as string
    const spent = await server.run(Effect.scoped(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ id: string; workspace_id: string }>`SELECT id, workspace_id FROM api_keys WHERE hash = ${hash}`
      const accounting = yield* AccountingLive.make().pipe(Effect.provide(storeSupport))
      yield* accounting.addCredits({ workspaceId: rows[0]!.workspace_id, amountNanos: 1000n, note: null, grantedByKeyId: null })
      const r = yield* accounting.reserve({ keyId: rows[0]!.id, workspaceId: rows[0]!.workspace_id, amountNanos: 10n, byok: false })
      yield* accounting.settle(r, { generationId: `gen-doomed-${hash}`, model: "m/m", provider: "p", promptTokens: 1, totalTokens: 1, costNanos: 10n, isByok: false })
      return rows[0]!.id
    })))
    assert.strictEqual((await call(server, "GET", "/key", secret)).status, 200)
    assert.deepStrictEqual((await call(server, "DELETE", `/keys/${hash}`, server.managementKey)).body, { deleted: true })
    assert.strictEqual((await call(server, "GET", "/key", secret)).status, 401)
    const listed = await call(server, "GET", "/keys?include_disabled=true", server.managementKey)
    assert.notInclude((listed.body.data as Array<KeyRecord>).map((k) => k.hash), hash)
    const ledger = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM ledger WHERE key_id = ${spent}`
    }))
    assert.strictEqual(ledger[0]!.n, 1)
  })

  it("the listing's usage rises by exactly the settled costs, and limit_remaining falls by them", async () => {
    const created = await call(server, "POST", "/keys", server.managementKey, { name: "metered", limit: 0.01 })
    const hash = created.body.data.hash as string
    const costs = [123_456n, 1n, 999_999n, 7n]
    await server.run(Effect.scoped(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ id: string; workspace_id: string }>`SELECT id, workspace_id FROM api_keys WHERE hash = ${hash}`
      const accounting = yield* AccountingLive.make().pipe(Effect.provide(storeSupport))
      yield* accounting.addCredits({ workspaceId: rows[0]!.workspace_id, amountNanos: 1_000_000_000n, note: null, grantedByKeyId: null })
      for (const [i, cost] of costs.entries()) {
        const r = yield* accounting.reserve({ keyId: rows[0]!.id, workspaceId: rows[0]!.workspace_id, amountNanos: cost, byok: false })
        yield* accounting.settle(r, { generationId: `gen-metered-${hash}-${i}`, model: "m/m", provider: "p", promptTokens: 1, totalTokens: 1, costNanos: cost, isByok: false })
      }
    })))
    const record = (await call(server, "GET", `/keys/${hash}`, server.managementKey)).body.data as KeyRecord
    const total = costs.reduce((a, b) => a + b, 0n)
    assert.strictEqual(record.usage, Number(total) / 1e9)
    assert.strictEqual(record.usage_daily, Number(total) / 1e9)
    assert.strictEqual(record.limit_remaining, Number(10_000_000n - total) / 1e9)
  })
})
