import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type Gateway, startGateway } from "../embeddings/Gateway.ts"
import { storeKind } from "../support/TestServer.ts"

// Issue 65: a management key minted "for" a workspace reached every workspace of the user who
// minted it (decision 0165). With `scope: "workspace"` it reaches its own workspace only; the
// default stays the user's reach, and every key record says which it has.
describe(`management keys of workspace scope (${storeKind})`, () => {
  let gateway: Gateway
  beforeAll(async () => {
    gateway = await startGateway({ config: { providers: [] } })
  })
  afterAll(() => gateway.close())

  const as = (key: string, method: string, path: string, body?: unknown) => gateway.call(path, body, { key, method })
  const ok = async (key: string, method: string, path: string, body?: unknown) => {
    const reply = await as(key, method, path, body)
    assert.isBelow(reply.status, 300, `${method} ${path}: ${reply.text}`)
    return reply.json
  }

  it("reaches its own workspace only; a key of user scope (the default) reaches every workspace of its user", async () => {
    const operator = gateway.server.managementKey
    const own = (await ok(operator, "GET", "/key")).data
    assert.strictEqual(own.kind, "management")
    assert.strictEqual(own.scope, "user", "the bootstrap key keeps decision 0165's reach")
    const teamA = own.workspace_id as string
    const teamB = (await ok(operator, "POST", "/workspaces", { name: "Team B", slug: "team-b-scoped" })).data.id as string
    const scopedKey = await ok(operator, "POST", "/keys", { name: "B only", workspace_id: teamB, kind: "management", scope: "workspace" })
    assert.deepInclude(scopedKey.data, { kind: "management", scope: "workspace", workspace_id: teamB })
    const userKey = await ok(operator, "POST", "/keys", { name: "B, user reach", workspace_id: teamB, kind: "management" })
    assert.deepInclude(userKey.data, { kind: "management", scope: "user" })
    const standard = await ok(operator, "POST", "/keys", { name: "A app" })
    assert.deepInclude(standard.data, { kind: "standard", scope: "workspace" })
    assert.strictEqual((await as(operator, "POST", "/keys", { name: "odd", scope: "user" })).status, 400, "scope is for management keys")

    const scoped = scopedKey.key as string
    // Its own workspace: read, listed, keys listed and minted there.
    assert.strictEqual((await as(scoped, "GET", `/workspaces/${teamB}`)).status, 200)
    const listed = await ok(scoped, "GET", "/workspaces")
    assert.deepStrictEqual(listed.data.map((w: any) => w.id), [teamB])
    assert.strictEqual(listed.total_count, 1)
    const keysOfB = (await ok(scoped, "GET", "/keys")).data as Array<any>
    assert.isTrue(keysOfB.every((k) => k.workspace_id === teamB) && keysOfB.length > 0)
    const minted = await ok(scoped, "POST", "/keys", { name: "B again", kind: "management" })
    assert.strictEqual(minted.data.scope, "workspace", "a key of workspace scope mints keys of its own scope")
    // Another workspace of the same user answers exactly as one that does not exist.
    assert.strictEqual((await as(scoped, "GET", `/workspaces/${teamA}`)).status, 404)
    assert.strictEqual((await as(scoped, "GET", `/keys?workspace_id=${teamA}`)).status, 404)
    assert.strictEqual((await as(scoped, "POST", "/keys", { name: "x", workspace_id: teamA })).status, 404)
    assert.strictEqual((await as(scoped, "GET", `/credits?workspace_id=${teamA}`)).status, 404)
    assert.strictEqual((await as(scoped, "GET", `/keys/${standard.data.hash}`)).status, 404)
    assert.strictEqual((await as(scoped, "PATCH", `/keys/${standard.data.hash}`, { disabled: true })).status, 404)
    assert.strictEqual((await as(scoped, "DELETE", `/keys/${standard.data.hash}`)).status, 404)
    assert.strictEqual((await as(scoped, "GET", `/audit-log?workspace_id=${teamA}`)).status, 404)
    // Nothing beyond its workspace: no new workspace, no key of user scope, no instance administration.
    assert.strictEqual((await as(scoped, "POST", "/workspaces", { name: "C", slug: "team-c-scoped" })).status, 403)
    assert.strictEqual((await as(scoped, "POST", "/keys", { name: "wider", kind: "management", scope: "user" })).status, 403)
    const activity = await ok(scoped, "GET", "/activity")
    assert.isArray(activity.data)
    // The standard key of A was left alone.
    assert.isFalse((await ok(operator, "GET", `/keys/${standard.data.hash}`)).data.disabled)

    // The default (user scope) still reaches the user's other workspaces, as decision 0165 says.
    assert.strictEqual((await as(userKey.key, "GET", `/workspaces/${teamA}`)).status, 200)
    assert.strictEqual((await as(userKey.key, "GET", `/keys?workspace_id=${teamA}`)).status, 200)
  })

  it("a management key of workspace scope of the workspace `default` is no instance administrator", async () => {
    const operator = gateway.server.managementKey
    const scoped = (await ok(operator, "POST", "/keys", { name: "default only", kind: "management", scope: "workspace" })).key as string
    assert.strictEqual((await as(scoped, "GET", "/audit-log/verify")).status, 403)
    assert.strictEqual((await as(operator, "GET", "/audit-log/verify")).status, 200)
  })
})
