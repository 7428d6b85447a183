import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { storeKind } from "../support/TestServer.ts"

describe(`two teams side by side on one gateway (${storeKind})`, () => {
  let fake: FakeUpstream.FakeServer
  let gateway: Gateway
  beforeAll(async () => {
    fake = await FakeOpenAi.start()
    gateway = await startGateway({
      config: { providers: [provider("alpha", fake.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1" } })])] }
    })
  })
  afterAll(async () => {
    await gateway.close()
    await fake.close()
  })

  const as = async (key: string, method: string, path: string, body?: unknown) => {
    const reply = await gateway.call(path, body, { key, method })
    return reply
  }
  const ok = async (key: string, method: string, path: string, body?: unknown) => {
    const reply = await as(key, method, path, body)
    assert.isBelow(reply.status, 300, `${method} ${path}: ${reply.text}`)
    return reply.json
  }

  it("an operator sets up team B with its own admin; keys, budgets, BYOK credentials, interns and ledgers stay apart", async () => {
    const operator = gateway.server.managementKey
    const teamA = (await ok(operator, "GET", "/key")).data.workspace_id as string
    const teamB = (await ok(operator, "POST", "/workspaces", { name: "Team B", slug: "team-b" })).data.id as string
    await ok(operator, "POST", `/workspaces/${teamB}/members/add`, { user_ids: ["user_bea"] })
    // Only an admin gives out management keys; Bea's key is hers, in her workspace.
    const beaKey = await ok(operator, "POST", "/keys", { name: "Bea admin", workspace_id: teamB, creator_user_id: "user_bea", kind: "management" })
    assert.strictEqual(beaKey.data.creator_user_id, "user_bea")
    assert.strictEqual(beaKey.data.workspace_id, teamB)
    const bea = beaKey.key as string
    // Bea is a member, not an admin, of team B: she can read it but not give out management keys.
    assert.strictEqual((await as(bea, "POST", "/keys", { name: "x", kind: "management" })).status, 403)
    assert.strictEqual((await as(bea, "PUT", `/workspaces/${teamB}/budgets/daily`, { limit_usd: 1 })).status, 403)
    assert.strictEqual((await as(bea, "GET", `/workspaces/${teamB}`)).status, 200)
    assert.strictEqual((await as(bea, "GET", `/workspaces/${teamA}`)).status, 404)

    // Each team: credits, a budget, a BYOK credential, a standard key and an intern.
    await ok(operator, "POST", "/credits", { amount: 5, workspace_id: teamB })
    await ok(operator, "POST", "/credits", { amount: 5 })
    await ok(operator, "PUT", `/workspaces/${teamB}/budgets/monthly`, { limit_usd: 0.002 })
    await ok(operator, "PUT", `/workspaces/${teamA}/budgets/monthly`, { limit_usd: 3 })
    const byokB = (await ok(bea, "POST", "/byok", { provider: "zeta", key: "sk-team-b-0123456789abcdef" })).data.id as string
    const byokA = (await ok(operator, "POST", "/byok", { provider: "zeta", key: "sk-team-a-0123456789abcdef" })).data.id as string
    const standardB = (await ok(bea, "POST", "/keys", { name: "B app" })).key as string
    const internB = (await ok(standardB, "POST", "/interns", { name: "bee" })).id as string
    const internA = (await ok(gateway.server.apiKey, "POST", "/interns", { name: "ant" })).id as string

    // The listing's workspace_id filter lists each workspace's keys.
    const keysB = (await ok(operator, "GET", `/keys?workspace_id=${teamB}`)).data as Array<any>
    assert.sameMembers(keysB.map((k) => k.name), ["Bea admin", "B app"])
    const keysA = (await ok(operator, "GET", `/keys?workspace_id=${teamA}`)).data as Array<any>
    assert.isTrue(keysA.every((k) => k.workspace_id === teamA))
    assert.notInclude(keysA.map((k) => k.name), "B app")
    assert.sameMembers(((await ok(bea, "GET", "/keys")).data as Array<any>).map((k) => k.name), ["Bea admin", "B app"])
    assert.strictEqual((await as(bea, "GET", `/keys?workspace_id=${teamA}`)).status, 404)

    // Nothing of A is visible to B's keys, and nothing of B to A's standard key.
    assert.strictEqual((await as(bea, "GET", `/byok/${byokA}`)).status, 404)
    assert.deepStrictEqual(((await ok(bea, "GET", "/byok")).data as Array<any>).map((c) => c.id), [byokB])
    assert.strictEqual((await as(standardB, "GET", `/interns/${internA}`)).json.error.code, "not_found")
    assert.strictEqual((await as(gateway.server.apiKey, "GET", `/interns/${internB}`)).json.error.code, "not_found")
    assert.strictEqual((await as(bea, "GET", `/workspaces/${teamA}/budgets`)).status, 404)
    assert.strictEqual((await ok(bea, "GET", `/workspaces/${teamB}/budgets`)).data[0].limit_usd, 0.002)

    // Each team's requests are billed to it and held by its own budget.
    const servedB = await ok(standardB, "POST", "/embeddings", { model: "acme/embed", input: "b ".repeat(400) })
    assert.strictEqual((await as(standardB, "POST", "/embeddings", { model: "acme/embed", input: "b ".repeat(900) })).json.error.metadata.reason, "workspace_budget")
    const servedA = await ok(gateway.server.apiKey, "POST", "/embeddings", { model: "acme/embed", input: "a ".repeat(900) })
    assert.strictEqual((await as(gateway.server.apiKey, "GET", `/generation?id=${servedB.id}`)).status, 404)
    assert.strictEqual((await as(standardB, "GET", `/generation?id=${servedA.id}`)).status, 404)
    assert.strictEqual((await ok(standardB, "GET", `/generation?id=${servedB.id}`)).data.workspace_id, teamB)
    const activityB = (await ok(bea, "GET", "/activity")).data as Array<any>
    assert.strictEqual(activityB.length, 1)
    assert.strictEqual(activityB[0].usage, servedB.usage.cost)
    const activityA = (await ok(operator, "GET", "/activity")).data as Array<any>
    assert.strictEqual(activityA.reduce((n, r) => n + r.requests, 0), 1)
    assert.strictEqual(activityA[0].usage, servedA.usage.cost)
    assert.strictEqual((await ok(operator, "GET", `/credits?workspace_id=${teamB}`)).data.total_usage, servedB.usage.cost)

    // A workspace with keys cannot be deleted; Bea's membership cannot end while she holds keys in it.
    assert.strictEqual((await as(operator, "DELETE", `/workspaces/${teamB}`)).status, 400)
    assert.strictEqual((await as(operator, "POST", `/workspaces/${teamB}/members/remove`, { user_ids: ["user_bea"] })).status, 400)
  })

  it("an operator creates another management key and revokes the bootstrap one", async () => {
    const bootstrap = gateway.server.managementKey
    const next = (await ok(bootstrap, "POST", "/keys", { name: "operator", kind: "management" })).key as string
    assert.isTrue((await ok(next, "GET", "/key")).data.is_management_key)
    const bootstrapHash = (await ok(bootstrap, "GET", "/key")).data.hash as string
    assert.strictEqual((await as(bootstrap, "DELETE", `/keys/${bootstrapHash}`)).status, 400)
    await ok(next, "DELETE", `/keys/${bootstrapHash}`)
    assert.strictEqual((await as(bootstrap, "GET", "/key")).status, 401)
    assert.strictEqual((await as(next, "GET", "/workspaces")).status, 200)
  })
})
