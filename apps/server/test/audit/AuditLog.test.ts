import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { call, type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

interface Entry {
  readonly id: number
  readonly action: string
  readonly workspace_id: string | null
  readonly target: { readonly type: string; readonly id: string }
  readonly actor: { readonly key_hash: string | null; readonly key_name: string | null; readonly user_id: string | null }
  readonly before: unknown
  readonly after: unknown
  readonly request_id: string | null
  readonly ip: string | null
  readonly prev_hash: string
  readonly hash: string
}

const byokSecret = "sk-audit-secret-0123456789abcdef"

describe(`the audit log of management actions (${storeKind})`, () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  const entries = async (key: string, query = ""): Promise<Array<Entry>> => {
    const reply = await call(server, "GET", `/audit-log${query}`, key)
    assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
    return reply.body.data
  }
  const count = () =>
    server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number | string }>`SELECT count(*) AS n FROM audit_log`))
      .then((rows) => Number(rows[0]!.n))

  it("every management route writes exactly one entry per successful change and none for a refused one", async () => {
    const operator = server.managementKey
    const state: Record<string, string> = {}
    interface Case {
      readonly route: string
      readonly run: () => Promise<{ status: number; body: any }>
      readonly status: number
      readonly action?: string
      readonly after?: (body: any) => void
    }
    const cases: Array<Case> = [
      { route: "POST /keys", run: () => call(server, "POST", "/keys", operator, { name: "audited" }), status: 201, action: "key.create",
        after: (body) => {
          state.hash = body.data.hash
          state.secret = body.key
        } },
      { route: "POST /keys (bad limit)", run: () => call(server, "POST", "/keys", operator, { name: "x", limit: -1 }), status: 400 },
      { route: "POST /keys (standard key)", run: () => call(server, "POST", "/keys", server.apiKey, { name: "x" }), status: 403 },
      { route: "PATCH /keys/{hash}", run: () => call(server, "PATCH", `/keys/${state.hash}`, operator, { name: "renamed" }), status: 200, action: "key.update" },
      { route: "PATCH /keys/{unknown}", run: () => call(server, "PATCH", `/keys/${"0".repeat(64)}`, operator, { name: "n" }), status: 404 },
      { route: "DELETE /keys/{hash}", run: () => call(server, "DELETE", `/keys/${state.hash}`, operator), status: 200, action: "key.delete" },
      { route: "DELETE /keys/{hash} again", run: () => call(server, "DELETE", `/keys/${state.hash}`, operator), status: 404 },
      { route: "POST /credits", run: () => call(server, "POST", "/credits", operator, { amount: 5 }), status: 200, action: "credits.add" },
      { route: "POST /credits (zero)", run: () => call(server, "POST", "/credits", operator, { amount: 0 }), status: 400 },
      { route: "POST /workspaces", run: () => call(server, "POST", "/workspaces", operator, { name: "Audited", slug: "audited" }), status: 201,
        action: "workspace.create", after: (body) => (state.workspace = body.data.id) },
      { route: "POST /workspaces (slug taken)", run: () => call(server, "POST", "/workspaces", operator, { name: "Again", slug: "audited" }), status: 400 },
      { route: "PATCH /workspaces/{id}", run: () => call(server, "PATCH", `/workspaces/${state.workspace}`, operator, { name: "Audited 2" }), status: 200,
        action: "workspace.update" },
      { route: "POST /workspaces/{id}/members/add", run: () => call(server, "POST", `/workspaces/${state.workspace}/members/add`, operator, { user_ids: ["user_ann"] }),
        status: 200, action: "member.add" },
      { route: "POST /workspaces/{id}/members/remove", run: () => call(server, "POST", `/workspaces/${state.workspace}/members/remove`, operator, { user_ids: ["user_ann"] }),
        status: 200, action: "member.remove" },
      { route: "PUT /workspaces/{id}/budgets/monthly", run: () => call(server, "PUT", `/workspaces/${state.workspace}/budgets/monthly`, operator, { limit_usd: 3 }),
        status: 200, action: "budget.set" },
      { route: "PUT /workspaces/{id}/budgets/lifetime (below monthly)", run: () => call(server, "PUT", `/workspaces/${state.workspace}/budgets/lifetime`, operator, { limit_usd: 1 }),
        status: 400 },
      { route: "DELETE /workspaces/{id}/budgets/monthly", run: () => call(server, "DELETE", `/workspaces/${state.workspace}/budgets/monthly`, operator), status: 200,
        action: "budget.delete" },
      { route: "DELETE /workspaces/{id}/budgets/monthly again", run: () => call(server, "DELETE", `/workspaces/${state.workspace}/budgets/monthly`, operator), status: 404 },
      { route: "POST /byok", run: () => call(server, "POST", "/byok", operator, { provider: "zeta", key: byokSecret }), status: 201, action: "byok.create",
        after: (body) => (state.byok = body.data.id) },
      { route: "PATCH /byok/{id}", run: () => call(server, "PATCH", `/byok/${state.byok}`, operator, { key: `${byokSecret}-2`, name: "rotated" }), status: 200,
        action: "byok.update" },
      { route: "DELETE /byok/{id}", run: () => call(server, "DELETE", `/byok/${state.byok}`, operator), status: 200, action: "byok.delete" },
      { route: "DELETE /byok/{id} again", run: () => call(server, "DELETE", `/byok/${state.byok}`, operator), status: 404 },
      { route: "POST /interns", run: () => call(server, "POST", "/interns", server.apiKey, { name: "audited-intern" }), status: 201, action: "intern.create",
        after: (body) => (state.intern = body.id) },
      { route: "POST /interns (bad name)", run: () => call(server, "POST", "/interns", server.apiKey, { name: "" }), status: 400 },
      { route: "PATCH /interns/{id}", run: () => call(server, "PATCH", `/interns/${state.intern}`, server.apiKey, { description: "audited" }), status: 200,
        action: "intern.update" },
      { route: "PATCH /interns/{unknown}", run: () => call(server, "PATCH", "/interns/00000000-0000-7000-8000-000000000000", server.apiKey, { description: "x" }),
        status: 404 },
      { route: "DELETE /workspaces/{id}", run: () => call(server, "DELETE", `/workspaces/${state.workspace}`, operator), status: 200, action: "workspace.delete" }
    ]
    for (const c of cases) {
      const before = await count()
      const reply = await c.run()
      assert.strictEqual(reply.status, c.status, `${c.route}: ${JSON.stringify(reply.body)}`)
      c.after?.(reply.body)
      const after = await count()
      assert.strictEqual(after - before, c.action === undefined ? 0 : 1, c.route)
      if (c.action !== undefined) {
        const [latest] = await entries(operator, "?limit=1")
        assert.strictEqual(latest!.action, c.action, c.route)
      }
    }
    const all = await entries(operator, "?limit=500")
    const text = JSON.stringify(all)
    assert.notInclude(text, byokSecret)
    assert.notInclude(text, state.secret!)
    const update = all.find((e) => e.action === "key.update")!
    assert.deepStrictEqual(update.before, { name: "audited" })
    assert.deepStrictEqual(update.after, { name: "renamed" })
    assert.strictEqual(update.target.id, state.hash)
    assert.strictEqual(update.actor.key_name !== null && update.actor.user_id !== null && update.actor.key_hash !== null, true)
    assert.isNotNull(update.request_id)
    assert.strictEqual(update.ip, "127.0.0.1")
    // Each entry carries the previous one's hash.
    const ascending = [...all].reverse()
    for (let i = 1; i < ascending.length; i++) assert.strictEqual(ascending[i]!.prev_hash, ascending[i - 1]!.hash)
    const verified = await call(server, "GET", "/audit-log/verify", operator)
    assert.deepStrictEqual(verified.body, { ok: true, checked: all.length })
  })

  it("a change of a workspace's provider settings is one entry with its routing before and after", async () => {
    const operator = server.managementKey
    const created = await call(server, "POST", "/workspaces", operator, { name: "Routed", slug: "routed" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const id = created.body.data.id
    const before = await count()
    const patched = await call(server, "PATCH", `/workspaces/${id}`, operator, { only: ["alpha"], data_collection: "deny", name: "Routed 2" })
    assert.strictEqual(patched.status, 200, JSON.stringify(patched.body))
    assert.strictEqual(await count(), before + 1)
    const [latest] = await entries(operator, "?limit=1")
    assert.strictEqual(latest!.action, "workspace.update")
    assert.deepStrictEqual(latest!.before, { name: "Routed", routing: null })
    assert.deepStrictEqual(latest!.after, { name: "Routed 2", routing: { only: ["alpha"], data_collection: "deny" } })
    assert.strictEqual((await call(server, "DELETE", `/workspaces/${id}`, operator)).status, 200)
  })

  it("filters by action, resource, target and time, and pages with a cursor", async () => {
    const operator = server.managementKey
    for (const name of ["p1", "p2", "p3"]) assert.strictEqual((await call(server, "POST", "/keys", operator, { name })).status, 201)
    const creates = await entries(operator, "?action=key.create")
    assert.isTrue(creates.length >= 4)
    assert.isTrue(creates.every((e) => e.action === "key.create"))
    assert.isTrue((await entries(operator, "?action=key.*")).some((e) => e.action === "key.delete"))
    const first = await call(server, "GET", "/audit-log?action=key.create&limit=2", operator)
    assert.strictEqual(first.body.data.length, 2)
    assert.isString(first.body.next_cursor)
    const second = await call(server, "GET", `/audit-log?action=key.create&limit=2&cursor=${first.body.next_cursor}`, operator)
    assert.isBelow(second.body.data[0].id, first.body.data[1].id)
    const target = creates[0]!.target.id
    assert.deepStrictEqual((await entries(operator, `?target_type=key&target_id=${target}`)).map((e) => e.id), [creates[0]!.id])
    assert.strictEqual((await entries(operator, "?since=2999-01-01")).length, 0)
    assert.strictEqual((await entries(operator, "?until=2000-01-01")).length, 0)
    assert.strictEqual((await call(server, "GET", "/audit-log?since=yesterday", operator)).status, 400)
    assert.strictEqual((await call(server, "GET", "/audit-log?limit=0", operator)).status, 400)
    assert.strictEqual((await call(server, "GET", "/audit-log", server.apiKey)).status, 403)
  })

  it("a workspace's management key reads only its workspace's entries and cannot verify the chain", async () => {
    const operator = server.managementKey
    const team = (await call(server, "POST", "/workspaces", operator, { name: "Team", slug: "audit-team" })).body.data.id as string
    assert.strictEqual((await call(server, "POST", `/workspaces/${team}/members/add`, operator, { user_ids: ["user_tom"] })).status, 200)
    const created = await call(server, "POST", "/keys", operator, { name: "Tom", workspace_id: team, creator_user_id: "user_tom", kind: "management" })
    assert.strictEqual(created.status, 201)
    const tom = created.body.key as string
    assert.strictEqual((await call(server, "POST", "/credits", tom, { amount: 1 })).status, 200)
    const seen = await entries(tom, "?limit=500")
    assert.isTrue(seen.length >= 3)
    assert.isTrue(seen.every((e) => e.workspace_id === team))
    assert.isTrue(seen.some((e) => e.action === "credits.add" && e.actor.key_name === "Tom"))
    assert.isTrue((await entries(operator, "?limit=500")).some((e) => e.workspace_id !== team))
    assert.strictEqual((await call(server, "GET", "/audit-log/verify", tom)).status, 403)
    const home = (await call(server, "GET", "/key", operator)).body.data.workspace_id as string
    assert.strictEqual((await call(server, "GET", `/audit-log?workspace_id=${home}`, tom)).status, 404)
    assert.isTrue((await entries(operator, `?workspace_id=${team}`)).every((e) => e.workspace_id === team))
  })

  it("concurrent changes chain one after another", async () => {
    const operator = server.managementKey
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => call(server, "POST", "/keys", operator, { name: `c${i}` })))
    assert.isTrue(replies.every((r) => r.status === 201))
    const verified = await call(server, "GET", "/audit-log/verify", operator)
    assert.strictEqual(verified.body.ok, true, JSON.stringify(verified.body))
    const ids = (await entries(operator, "?limit=500")).map((e) => e.id).reverse()
    assert.deepStrictEqual(ids, Array.from({ length: ids.length }, (_, i) => i + 1))
  })

  it("verify reports a tampered entry, and a cut-off end, at that entry", async () => {
    const operator = server.managementKey
    const all = await entries(operator, "?limit=500")
    // An entry from the middle with an `after` to forge (a deletion's is null).
    const changes = all.filter((e) => e.after !== null)
    const victim = changes[Math.floor(changes.length / 2)]!
    await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE audit_log SET after_json = ${JSON.stringify({ name: "forged" })} WHERE id = ${victim.id}`))
    const tampered = await call(server, "GET", "/audit-log/verify", operator)
    assert.deepStrictEqual(tampered.body, { ok: false, checked: victim.id - 1, first_broken: { id: victim.id, reason: "hash_mismatch" } })
    // Restoring the text restores the chain; dropping the newest entry breaks it there.
    await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE audit_log SET after_json = ${JSON.stringify(victim.after)} WHERE id = ${victim.id}`))
    assert.strictEqual((await call(server, "GET", "/audit-log/verify", operator)).body.ok, true)
    const newest = all[0]!
    await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM audit_log WHERE id = ${newest.id}`))
    const cut = await call(server, "GET", "/audit-log/verify", operator)
    assert.deepStrictEqual(cut.body.first_broken, { id: newest.id, reason: "prev_hash_mismatch" })
  })
})
