import { OpenRouter } from "@openrouter/sdk"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer } from "../support/TestServer.ts"

describe("@openrouter/sdk against Switchyard: keys", () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("apiKeys.list passes the SDK's own response validation", async () => {
    const client = new OpenRouter({ apiKey: server.managementKey, serverURL: server.baseUrl })
    const result = await client.apiKeys.list()
    assert.strictEqual(result.data.length, 2)
    const first = result.data[0]!
    assert.strictEqual(first.name, "Bootstrap management key")
    assert.strictEqual(first.usage, 0)
    assert.strictEqual(first.limit, null)
    assert.match(first.workspaceId, /^[0-9a-f-]{36}$/)
  })

  it("apiKeys.list honours includeDisabled, offset and workspaceId", async () => {
    const client = new OpenRouter({ apiKey: server.managementKey, serverURL: server.baseUrl })
    const all = await client.apiKeys.list({ includeDisabled: true })
    const paged = await client.apiKeys.list({ offset: 1, workspaceId: all.data[0]!.workspaceId })
    assert.deepStrictEqual(paged.data.map((k) => k.hash), all.data.slice(1).map((k) => k.hash))
  })

  it("a standard key gets the SDK's forbidden error", async () => {
    const client = new OpenRouter({ apiKey: server.apiKey, serverURL: server.baseUrl })
    const error = await client.apiKeys.list().then(() => undefined, (e: unknown) => e)
    assert.isDefined(error)
    assert.strictEqual((error as { statusCode?: number }).statusCode, 403)
  })
})
