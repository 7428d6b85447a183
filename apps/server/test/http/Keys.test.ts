import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer } from "../support/TestServer.ts"

const get = (server: RunningServer, path: string, key?: string) =>
  fetch(`${server.baseUrl}${path}`, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } })

const keyFields = [
  "hash", "name", "label", "disabled", "limit", "limit_remaining", "limit_reset", "include_byok_in_limit",
  "usage", "usage_daily", "usage_weekly", "usage_monthly", "byok_usage", "byok_usage_daily",
  "byok_usage_weekly", "byok_usage_monthly", "created_at", "updated_at", "expires_at", "creator_user_id",
  "external_user", "workspace_id", "kind", "scope"
]

describe("GET /keys", () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("lists both bootstrap keys for a management key, every field present", async () => {
    const response = await get(server, "/keys", server.managementKey)
    assert.strictEqual(response.status, 200)
    const body = await response.json() as { data: Array<Record<string, unknown>> }
    assert.strictEqual(body.data.length, 2)
    for (const record of body.data) {
      assert.deepStrictEqual(Object.keys(record).sort(), [...keyFields].sort())
      assert.strictEqual(record.usage, 0)
      assert.match(String(record.workspace_id), /^[0-9a-f-]{36}$/)
      assert.isFalse(JSON.stringify(record).includes(server.managementKey))
      assert.isFalse(JSON.stringify(record).includes(server.apiKey))
    }
    assert.deepStrictEqual(body.data.map((r) => r.name), ["Bootstrap management key", "Bootstrap API key"])
    // What each reaches: the bootstrap management key every workspace of its user, the API key its own.
    assert.deepStrictEqual(body.data.map((r) => [r.kind, r.scope]), [["management", "user"], ["standard", "workspace"]])
  })

  it("refuses a standard key with 403 in the integer-code envelope", async () => {
    const response = await get(server, "/keys", server.apiKey)
    assert.strictEqual(response.status, 403)
    const body = await response.json() as { error: { code: number; message: string } }
    assert.strictEqual(body.error.code, 403)
    assert.isString(body.error.message)
  })

  it("answers 401 without a key, with a malformed key and with an unknown key", async () => {
    for (const key of [undefined, "x", "sk-sy-v1-0000000000000000000000000000000000000000000000000000000000000000"]) {
      const response = await get(server, "/keys", key)
      assert.strictEqual(response.status, 401)
      const body = await response.json() as { error: { code: number } }
      assert.strictEqual(body.error.code, 401)
    }
  })

  it("answers 400 naming the parameter for bad query values", async () => {
    for (const [query, field] of [["offset=-1", "offset"], ["offset=abc", "offset"], ["offset=1.5", "offset"], ["include_disabled=maybe", "include_disabled"], ["workspace_id=not-a-uuid", "workspace_id"]] as const) {
      const response = await get(server, `/keys?${query}`, server.managementKey)
      assert.strictEqual(response.status, 400, query)
      const body = await response.json() as { error: { code: number; message: string } }
      assert.strictEqual(body.error.code, 400)
      assert.include(body.error.message, field)
    }
  })

  it("pages with offset and keeps a stable order", async () => {
    const all = await (await get(server, "/keys", server.managementKey)).json() as { data: Array<{ hash: string }> }
    const second = await (await get(server, "/keys?offset=1", server.managementKey)).json() as { data: Array<{ hash: string }> }
    assert.deepStrictEqual(second.data.map((r) => r.hash), all.data.slice(1).map((r) => r.hash))
    const past = await (await get(server, "/keys?offset=50", server.managementKey)).json() as { data: Array<unknown> }
    assert.strictEqual(past.data.length, 0)
    for (const offset of ["1000000000", "9007199254740993", "123456789012345678901234567890"]) {
      const far = await get(server, `/keys?offset=${offset}`, server.managementKey)
      assert.strictEqual(far.status, 200, `offset ${offset} has no upper bound`)
      assert.deepStrictEqual(await far.json(), { data: [] })
    }
  })

  it("matches workspace_id as a UUID, whatever the case of its hex digits", async () => {
    const all = await (await get(server, "/keys", server.managementKey)).json() as { data: Array<{ hash: string; workspace_id: string }> }
    const upper = await get(server, `/keys?workspace_id=${all.data[0]!.workspace_id.toUpperCase()}`, server.managementKey)
    assert.strictEqual(upper.status, 200)
    const body = await upper.json() as { data: Array<{ hash: string; workspace_id: string }> }
    assert.deepStrictEqual(body.data.map((r) => r.hash), all.data.map((r) => r.hash))
    assert.strictEqual(body.data[0]!.workspace_id, all.data[0]!.workspace_id)
  })

  it("filters by workspace_id and hides other workspaces", async () => {
    const all = await (await get(server, "/keys", server.managementKey)).json() as { data: Array<{ workspace_id: string }> }
    const own = all.data[0]!.workspace_id
    const same = await get(server, `/keys?workspace_id=${own}`, server.managementKey)
    assert.strictEqual(same.status, 200)
    const other = await get(server, "/keys?workspace_id=00000000-0000-4000-8000-000000000000", server.managementKey)
    assert.strictEqual(other.status, 404)
    assert.strictEqual((await other.json() as { error: { code: number } }).error.code, 404)
  })

  it("answers unknown routes with the envelope", async () => {
    const response = await get(server, "/no-such-thing", server.managementKey)
    assert.strictEqual(response.status, 404)
    assert.strictEqual((await response.json() as { error: { code: number } }).error.code, 404)
  })

  it("serves the OpenAPI document at version 1.0.0", async () => {
    const response = await get(server, "/openapi.json")
    assert.strictEqual(response.status, 200)
    const doc = await response.json() as { info: { version: string }; paths: Record<string, unknown> }
    assert.strictEqual(doc.info.version, "1.0.0")
    assert.property(doc.paths, "/api/v1/keys")
    for (const path of ["/api/v1/embeddings", "/api/v1/rerank", "/api/v1/rerank/plan", "/api/v1/rerank/models"]) assert.property(doc.paths, path)
  })
})
