import { OpenRouter } from "@openrouter/sdk"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type Gateway, startGateway } from "../embeddings/Gateway.ts"

/** The longest round trip of the embeddings calls this file made: no latency the gateway measured can exceed it. */
let slowestEmbedMs = 0
const timedEmbed = async (gateway: Gateway, body: unknown) => {
  const started = performance.now()
  const reply = await gateway.embed(body)
  slowestEmbedMs = Math.max(slowestEmbedMs, performance.now() - started)
  return reply
}

const statusOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  return (error as { statusCode?: number } | undefined)?.statusCode
}

describe("@openrouter/sdk against Switchyard: workspaces, members, budgets, generation, activity", () => {
  let gateway: Gateway
  let admin: OpenRouter
  beforeAll(async () => {
    gateway = await startGateway({ config: { providers: [] } })
    admin = new OpenRouter({ apiKey: gateway.server.managementKey, serverURL: gateway.server.baseUrl })
  })
  afterAll(() => gateway.close())

  it("workspaces.create, get (by id and slug), list, update and delete pass the SDK's validation", async () => {
    const created = await admin.workspaces.create({ createWorkspaceRequest: { name: "Team Blue", slug: "team-blue", description: "the blue team" } })
    assert.strictEqual(created.data.slug, "team-blue")
    assert.strictEqual(created.data.description, "the blue team")
    assert.isNull(created.data.updatedAt)
    const id = created.data.id
    assert.deepStrictEqual((await admin.workspaces.get({ id })).data, created.data)
    assert.deepStrictEqual((await admin.workspaces.get({ id: "team-blue" })).data, created.data)
    const listed = await admin.workspaces.list()
    const page = listed.result
    assert.include(page.data.map((w) => w.slug), "team-blue")
    assert.include(page.data.map((w) => w.slug), "default")
    assert.strictEqual(page.totalCount, page.data.length)
    const updated = await admin.workspaces.update({ id, updateWorkspaceRequest: { name: "Team Navy", defaultTextModel: "acme/embed" } })
    assert.strictEqual(updated.data.name, "Team Navy")
    assert.strictEqual(updated.data.defaultTextModel, "acme/embed")
    assert.isNotNull(updated.data.updatedAt)
    assert.strictEqual(await statusOf(admin.workspaces.create({ createWorkspaceRequest: { name: "Again", slug: "team-blue" } })), 400)
    const deleted = await admin.workspaces.delete({ id })
    assert.isTrue(deleted.deleted)
    assert.strictEqual(await statusOf(admin.workspaces.get({ id })), 404)
    // The slug is free again once its workspace is gone.
    const again = await admin.workspaces.create({ createWorkspaceRequest: { name: "Team Blue", slug: "team-blue" } })
    assert.notStrictEqual(again.data.id, id)
  })

  it("members: list, bulk add and bulk remove pass the SDK's validation", async () => {
    const ws = (await admin.workspaces.create({ createWorkspaceRequest: { name: "Members", slug: "members" } })).data
    const before = (await admin.workspaces.listMembers({ id: ws.id })).result
    assert.strictEqual(before.totalCount, 1)
    assert.strictEqual(before.data[0]!.role, "admin")
    const added = await admin.workspaces.bulkAddMembers({ id: ws.id, bulkAddWorkspaceMembersRequest: { userIds: ["user_alice", "user_bob"] } })
    assert.strictEqual(added.addedCount, 2)
    assert.deepStrictEqual(added.data.map((m) => [m.userId, m.role, m.workspaceId]), [["user_alice", "member", ws.id], ["user_bob", "member", ws.id]])
    const again = await admin.workspaces.bulkAddMembers({ id: ws.id, bulkAddWorkspaceMembersRequest: { userIds: ["user_alice"] } })
    assert.strictEqual(again.addedCount, 0)
    assert.strictEqual((await admin.workspaces.listMembers({ id: ws.id })).result.totalCount, 3)
    const removed = await admin.workspaces.bulkRemoveMembers({ id: ws.id, bulkRemoveWorkspaceMembersRequest: { userIds: ["user_bob", "user_nobody"] } })
    assert.strictEqual(removed.removedCount, 1)
    assert.deepStrictEqual((await admin.workspaces.listMembers({ id: ws.id })).result.data.map((m) => m.userId).sort(), [before.data[0]!.userId, "user_alice"].sort())
    // The last admin stays.
    assert.strictEqual(await statusOf(admin.workspaces.bulkRemoveMembers({ id: ws.id, bulkRemoveWorkspaceMembersRequest: { userIds: [before.data[0]!.userId] } })), 400)
  })

  it("budgets: set, get, list and delete pass the SDK's validation; limits narrow with the interval", async () => {
    const ws = (await admin.workspaces.create({ createWorkspaceRequest: { name: "Budgets", slug: "budgets" } })).data
    const monthly = await admin.workspaces.setBudget({ workspaceRef: ws.id, interval: "monthly", upsertWorkspaceBudgetRequest: { limitUsd: 30 } })
    assert.strictEqual(monthly.data.limitUsd, 30)
    assert.strictEqual(monthly.data.resetInterval, "monthly")
    assert.isFalse(monthly.includeByokInBudgets)
    const lifetime = await admin.workspaces.setBudget({
      workspaceRef: "budgets", interval: "lifetime", upsertWorkspaceBudgetRequest: { limitUsd: 100, includeByokInBudgets: true }
    })
    assert.isNull(lifetime.data.resetInterval)
    assert.isTrue(lifetime.includeByokInBudgets)
    assert.strictEqual(await statusOf(admin.workspaces.setBudget({ workspaceRef: ws.id, interval: "daily", upsertWorkspaceBudgetRequest: { limitUsd: 31 } })), 400)
    await admin.workspaces.setBudget({ workspaceRef: ws.id, interval: "daily", upsertWorkspaceBudgetRequest: { limitUsd: 1.25 } })
    const got = await admin.workspaces.getBudget({ workspaceRef: ws.id, interval: "daily" })
    assert.strictEqual(got.data.limitUsd, 1.25)
    const listed = await admin.workspaces.listBudgets({ workspaceRef: ws.id })
    assert.deepStrictEqual(listed.data.map((b) => [b.resetInterval, b.limitUsd]), [["daily", 1.25], ["monthly", 30], [null, 100]])
    assert.isTrue((await admin.workspaces.deleteBudget({ workspaceRef: ws.id, interval: "daily" })).deleted)
    assert.strictEqual(await statusOf(admin.workspaces.getBudget({ workspaceRef: ws.id, interval: "daily" })), 404)
    assert.strictEqual(await statusOf(admin.workspaces.deleteBudget({ workspaceRef: ws.id, interval: "weekly" })), 404)
  })

  it("generations.getGeneration and analytics.getUserActivity pass the SDK's validation", async () => {
    const reply = await timedEmbed(gateway, { model: "switchyard/local-embed", input: ["hello world", "again"] })
    assert.strictEqual(reply.status, 200, reply.text)
    const user = new OpenRouter({ apiKey: gateway.server.apiKey, serverURL: gateway.server.baseUrl })
    const generation = await user.generations.getGeneration({ id: reply.json.id })
    assert.strictEqual(generation.data.id, reply.json.id)
    assert.strictEqual(generation.data.model, "switchyard/local-embed")
    assert.strictEqual(generation.data.tokensPrompt, reply.json.usage.prompt_tokens)
    assert.strictEqual(generation.data.totalCost, 0)
    assert.isFalse(generation.data.isByok)
    // The gateway's own measure of the request: within the round trip the test saw.
    assert.isAtLeast(generation.data.latency!, 0)
    assert.isAtMost(generation.data.latency!, slowestEmbedMs)
    assert.strictEqual(generation.data.apiType, "embeddings")
    assert.strictEqual(await statusOf(user.generations.getGeneration({ id: "gen-unknown" })), 404)

    const activity = await admin.analytics.getUserActivity()
    const today = new Date().toISOString().slice(0, 10)
    const row = activity.data.find((r) => r.model === "switchyard/local-embed" && r.date === today)
    assert.isDefined(row)
    assert.isAtLeast(row!.requests, 1)
    assert.strictEqual(row!.promptTokens, reply.json.usage.prompt_tokens * row!.requests)
    assert.isUndefined(row!.workspaceId)
    const grouped = await admin.analytics.getUserActivity({ groupBy: "workspace", date: today })
    assert.isString(grouped.data[0]!.workspaceId)
    assert.strictEqual(await statusOf(admin.analytics.getUserActivity({ date: "2001-01-01" })), 400)
  })

  it("providers.list and endpoints.list pass the SDK's validation and carry the measured figures", async () => {
    const user = new OpenRouter({ apiKey: gateway.server.apiKey, serverURL: gateway.server.baseUrl })
    const providers = await user.providers.list()
    const local = providers.data.find((p) => p.slug === "local")
    assert.isDefined(local)
    assert.isNull(local!.privacyPolicyUrl)
    const served = await timedEmbed(gateway, { model: "switchyard/local-embed", input: "measure me" })
    assert.strictEqual(served.status, 200, served.text)
    const listed = await user.endpoints.list({ author: "switchyard", slug: "local-embed" })
    assert.strictEqual(listed.data.id, "switchyard/local-embed")
    assert.deepStrictEqual(listed.data.architecture.outputModalities, ["embeddings"])
    const endpoint = listed.data.endpoints[0]!
    assert.strictEqual(endpoint.status, 0)
    assert.strictEqual(endpoint.pricing.prompt, "0")
    assert.strictEqual(endpoint.uptimeLast5m, 100)
    assert.isNotNull(endpoint.latencyLast30m)
    // Percentiles of the calls this file made, in milliseconds: ordered, and none over the slowest round trip.
    const { p50, p75, p90, p99 } = endpoint.latencyLast30m!
    assert.isAtLeast(p50, 0)
    assert.isAtMost(p50, p75)
    assert.isAtMost(p75, p90)
    assert.isAtMost(p90, p99)
    assert.isAtMost(p99, slowestEmbedMs)
    const raw = await gateway.call("/models/switchyard/local-embed/endpoints")
    assert.strictEqual(raw.json.data.endpoints[0].data_collection, "deny")
    assert.strictEqual(await statusOf(user.endpoints.list({ author: "nobody", slug: "nothing" })), 404)
  })
})
