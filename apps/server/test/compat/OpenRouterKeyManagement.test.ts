import { OpenRouter } from "@openrouter/sdk"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer } from "../support/TestServer.ts"

const statusOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  return (error as { statusCode?: number } | undefined)?.statusCode
}

describe("@openrouter/sdk against Switchyard: key management, credits, BYOK", () => {
  let server: RunningServer
  let admin: OpenRouter
  beforeAll(async () => {
    server = await startServer()
    admin = new OpenRouter({ apiKey: server.managementKey, serverURL: server.baseUrl })
  })
  afterAll(() => server.close())

  it("apiKeys.create, get, update, list, getCurrentKeyMetadata and delete pass the SDK's validation", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000)
    const created = await admin.apiKeys.create({
      requestBody: { name: "sdk key", limit: 1.5, limitReset: "weekly", includeByokInLimit: true, expiresAt }
    })
    assert.match(created.key, /^sk-sy-v1-[0-9a-f]{64}$/)
    assert.strictEqual(created.data.name, "sdk key")
    assert.strictEqual(created.data.limit, 1.5)
    assert.strictEqual(created.data.limitRemaining, 1.5)
    assert.strictEqual(created.data.limitReset, "weekly")
    assert.isTrue(created.data.includeByokInLimit)
    assert.strictEqual(created.data.expiresAt?.getTime(), Math.floor(expiresAt.getTime()))
    assert.strictEqual(created.data.usage, 0)
    const hash = created.data.hash

    const fetched = await admin.apiKeys.get({ hash })
    assert.deepStrictEqual(fetched.data, created.data)
    assert.notInclude(JSON.stringify(fetched), created.key)

    const own = new OpenRouter({ apiKey: created.key, serverURL: server.baseUrl })
    const current = await own.apiKeys.getCurrentKeyMetadata()
    assert.isFalse(current.data.isManagementKey)
    assert.strictEqual(current.data.limit, 1.5)
    assert.strictEqual(current.data.workspaceId, created.data.workspaceId)
    assert.isAbove(current.data.rateLimit.requests, 0)
    assert.isString(current.data.rateLimit.interval)
    const managing = await admin.apiKeys.getCurrentKeyMetadata()
    assert.isTrue(managing.data.isManagementKey)

    const updated = await admin.apiKeys.update({ hash, requestBody: { name: "renamed", limit: null, disabled: true } })
    assert.strictEqual(updated.data.name, "renamed")
    assert.isNull(updated.data.limit)
    assert.isNull(updated.data.limitRemaining)
    assert.isTrue(updated.data.disabled)
    assert.isNotNull(updated.data.updatedAt)
    assert.strictEqual(await statusOf(own.apiKeys.getCurrentKeyMetadata()), 401)

    const visible = await admin.apiKeys.list()
    assert.notInclude(visible.data.map((k) => k.hash), hash)
    const all = await admin.apiKeys.list({ includeDisabled: true })
    assert.include(all.data.map((k) => k.hash), hash)

    const deleted = await admin.apiKeys.delete({ hash })
    assert.isTrue(deleted.deleted)
    assert.strictEqual(await statusOf(admin.apiKeys.get({ hash })), 404)
    assert.strictEqual(await statusOf(admin.apiKeys.delete({ hash })), 404)
    const after = await admin.apiKeys.list({ includeDisabled: true })
    assert.notInclude(after.data.map((k) => k.hash), hash)
  })

  it("a standard key may read its own record but gets 403 on key management", async () => {
    const standard = new OpenRouter({ apiKey: server.apiKey, serverURL: server.baseUrl })
    const current = await standard.apiKeys.getCurrentKeyMetadata()
    assert.isFalse(current.data.isManagementKey)
    assert.strictEqual(await statusOf(standard.apiKeys.create({ requestBody: { name: "nope" } })), 403)
    assert.strictEqual(await statusOf(standard.credits.getCredits()), 403)
  })

  it("credits.getCredits reports what an operator added", async () => {
    const before = await admin.credits.getCredits()
    const added = await fetch(`${server.baseUrl}/credits`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.managementKey}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: "12.5", note: "sdk test" })
    })
    assert.strictEqual(added.status, 200)
    const after = await admin.credits.getCredits()
    assert.strictEqual(after.data.totalCredits, before.data.totalCredits + 12.5)
    assert.strictEqual(after.data.totalUsage, 0)
  })

  it("byok.create, list, get, update and delete pass the SDK's validation and never return the secret", async () => {
    const secret = "sk-byok-test-0123456789abcdefghijklmnop"
    const created = await admin.byok.create({ createBYOKKeyRequest: { provider: "openai", key: secret, name: "team openai" } })
    assert.strictEqual(created.data.provider, "openai")
    assert.strictEqual(created.data.label, "sk-...mnop")
    assert.notInclude(JSON.stringify(created), secret)
    const page = await admin.byok.list()
    assert.strictEqual(page.result.totalCount, 1)
    assert.strictEqual(page.result.data[0]!.id, created.data.id)
    const fetched = await admin.byok.get({ id: created.data.id })
    assert.deepStrictEqual(fetched.data, created.data)
    const updated = await admin.byok.update({ id: created.data.id, updateBYOKKeyRequest: { disabled: true, name: null } })
    assert.isTrue(updated.data.disabled)
    assert.isNull(updated.data.name)
    const deleted = await admin.byok.delete({ id: created.data.id })
    assert.isTrue(deleted.deleted)
    assert.strictEqual(await statusOf(admin.byok.get({ id: created.data.id })), 404)
  })
})
