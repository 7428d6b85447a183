import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { dropAppendOnly } from "../support/AuditGuard.ts"
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
const providerSecret = "sk-audit-provider-secret-9f2e"

// A provider as the config file has one; nothing is routed to it here.
const providerBody = (slug: string) => ({
  slug,
  name: slug,
  adapter: "openai",
  base_url: "http://127.0.0.1:9/v1",
  data_collection: "deny",
  endpoints: [{ model: `${slug}/embed`, upstream_model: "embed", pricing: { prompt: "0.01" }, dimensions: 16, max_batch_items: 64 }],
  api_key: providerSecret
})

const unknownIntern = "00000000-0000-7000-8000-000000000000"


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

  // Runtime events move an intern on its own (queued, provisioning, running): none is an audit entry.
  const untilStatus = async (id: string, status: string) => {
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline) {
      const seen = await call(server, "GET", `/interns/${id}`, server.apiKey)
      if (seen.body.status === status) return
      if (seen.body.status === "failed") assert.fail(`intern ${id} failed: ${seen.body.last_failure_message}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.fail(`intern ${id} did not become ${status}`)
  }

  it("every management route writes exactly one entry per successful change and none for a refused one", { timeout: 180_000 }, async () => {
    const operator = server.managementKey
    const state: Record<string, string> = {}
    state.home = (await call(server, "GET", "/key", operator)).body.data.workspace_id
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
      { route: "POST /byok (no key)", run: () => call(server, "POST", "/byok", operator, { provider: "zeta" }), status: 400 },
      { route: "POST /byok (standard key)", run: () => call(server, "POST", "/byok", server.apiKey, { provider: "zeta", key: byokSecret }), status: 403 },
      { route: "PATCH /byok/{id}", run: () => call(server, "PATCH", `/byok/${state.byok}`, operator, { key: `${byokSecret}-2`, name: "rotated" }), status: 200,
        action: "byok.update" },
      { route: "PATCH /byok/{unknown}", run: () => call(server, "PATCH", "/byok/byok_unknown", operator, { name: "x" }), status: 404 },
      { route: "DELETE /byok/{id}", run: () => call(server, "DELETE", `/byok/${state.byok}`, operator), status: 200, action: "byok.delete" },
      { route: "DELETE /byok/{id} again", run: () => call(server, "DELETE", `/byok/${state.byok}`, operator), status: 404 },

      // Administrators: the management keys of `default`, granted by adding a user there and creating one.
      { route: "POST /workspaces/{default}/members/add (an administrator to be)", run: () =>
        call(server, "POST", `/workspaces/${state.home}/members/add`, operator, { user_ids: ["user_ops"] }), status: 200, action: "member.add" },
      { route: "POST /keys (grant: a management key of default)", run: () =>
        call(server, "POST", "/keys", operator, { name: "ops admin", workspace_id: state.home, creator_user_id: "user_ops", kind: "management" }),
        status: 201, action: "key.create", after: (body) => {
          state.adminHash = body.data.hash
          state.adminKey = body.key
        } },
      { route: "POST /workspaces/{id}/members/add (a member of the workspace only)", run: () =>
        call(server, "POST", `/workspaces/${state.workspace}/members/add`, operator, { user_ids: ["user_team"] }), status: 200, action: "member.add" },
      { route: "POST /keys (a workspace's management key)", run: () =>
        call(server, "POST", "/keys", operator, { name: "team admin", workspace_id: state.workspace, creator_user_id: "user_team", kind: "management" }),
        status: 201, action: "key.create", after: (body) => {
          state.teamHash = body.data.hash
          state.teamKey = body.key
        } },
      { route: "POST /keys (a workspace's key granting itself default)", run: () =>
        call(server, "POST", "/keys", state.teamKey!, { name: "x", workspace_id: state.home, kind: "management" }), status: 404 },
      { route: "POST /byok (a workspace's management key, its own workspace)", run: () =>
        call(server, "POST", "/byok", state.teamKey!, { provider: "zeta", key: byokSecret }), status: 201, action: "byok.create" },

      // Providers: instance administrators only; the config file's are declarative.
      { route: "POST /providers", run: () => call(server, "POST", "/providers", state.adminKey!, providerBody("audited")), status: 201, action: "provider.create" },
      { route: "POST /providers (taken slug)", run: () => call(server, "POST", "/providers", operator, providerBody("audited")), status: 409 },
      { route: "POST /providers (config file's)", run: () => call(server, "POST", "/providers", operator, providerBody("local")), status: 409 },
      { route: "POST /providers (invalid)", run: () => call(server, "POST", "/providers", operator, { ...providerBody("bad"), adapter: "nope" }), status: 400 },
      { route: "POST /providers (not an administrator)", run: () => call(server, "POST", "/providers", state.teamKey!, providerBody("mine")), status: 403 },
      { route: "PATCH /providers/{slug}", run: () => call(server, "PATCH", "/providers/audited", operator, { name: "Audited" }), status: 200,
        action: "provider.update" },
      { route: "PATCH /providers/{slug} (rotate)", run: () => call(server, "PATCH", "/providers/audited", operator, { api_key: `${providerSecret}-2` }),
        status: 200, action: "provider.update" },
      { route: "PATCH /providers/{slug} (disable)", run: () => call(server, "PATCH", "/providers/audited", operator, { enabled: false }), status: 200,
        action: "provider.disable" },
      { route: "PATCH /providers/{slug} (enable)", run: () => call(server, "PATCH", "/providers/audited", operator, { enabled: true }), status: 200,
        action: "provider.enable" },
      { route: "PATCH /providers/{slug} (slug)", run: () => call(server, "PATCH", "/providers/audited", operator, { slug: "renamed" }), status: 400 },
      { route: "PATCH /providers/{unknown}", run: () => call(server, "PATCH", "/providers/missing", operator, { name: "x" }), status: 404 },
      { route: "PATCH /providers/{config file's}", run: () => call(server, "PATCH", "/providers/local", operator, { name: "x" }), status: 409 },
      { route: "PATCH /providers/{slug} (not an administrator)", run: () => call(server, "PATCH", "/providers/audited", state.teamKey!, { name: "x" }), status: 403 },
      // A probe changes nothing.
      { route: "POST /providers/{slug}/test", run: () => call(server, "POST", "/providers/local/test", operator), status: 200 },
      { route: "DELETE /providers/{config file's}", run: () => call(server, "DELETE", "/providers/local", operator), status: 409 },
      { route: "DELETE /providers/{slug} (not an administrator)", run: () => call(server, "DELETE", "/providers/audited", state.teamKey!), status: 403 },
      { route: "DELETE /providers/{slug}", run: () => call(server, "DELETE", "/providers/audited", operator), status: 200, action: "provider.delete" },
      { route: "DELETE /providers/{slug} again", run: () => call(server, "DELETE", "/providers/audited", operator), status: 404 },

      // Interns: each change the store accepts, recorded with the write that records it.
      { route: "POST /interns", run: () => call(server, "POST", "/interns", server.apiKey, { name: "audited-intern" }), status: 201, action: "intern.create",
        after: (body) => (state.intern = body.id) },
      { route: "POST /interns (bad name)", run: () => call(server, "POST", "/interns", server.apiKey, { name: "" }), status: 400 },
      { route: "POST /interns (name taken)", run: () => call(server, "POST", "/interns", server.apiKey, { name: "audited-intern" }), status: 409 },
      { route: "PATCH /interns/{id}", run: () => call(server, "PATCH", `/interns/${state.intern}`, server.apiKey, { description: "audited" }), status: 200,
        action: "intern.update" },
      { route: "PATCH /interns/{id} (nothing)", run: () => call(server, "PATCH", `/interns/${state.intern}`, server.apiKey, {}), status: 200 },
      { route: "PATCH /interns/{unknown}", run: () => call(server, "PATCH", `/interns/${unknownIntern}`, server.apiKey, { description: "x" }),
        status: 404 },
      { route: "POST /interns (provision: true)", run: () => call(server, "POST", "/interns", server.apiKey, { name: "audited-runner", provision: true }),
        status: 201, action: "intern.create", after: (body) => (state.runner = body.id) },
      { route: "POST /interns/{id}/suspend (stopped already: nothing to do)", run: () => call(server, "POST", `/interns/${state.intern}/suspend`, server.apiKey),
        status: 200 },
      { route: "POST /interns/{id}/provision (running: refused)", run: async () => {
        await untilStatus(state.runner!, "running")
        return call(server, "POST", `/interns/${state.runner}/provision`, server.apiKey)
      }, status: 409 },
      { route: "POST /interns/{id}/suspend", run: () => call(server, "POST", `/interns/${state.runner}/suspend`, server.apiKey), status: 200,
        action: "intern.suspend" },
      { route: "POST /interns/{id}/provision", run: () => call(server, "POST", `/interns/${state.runner}/provision`, server.apiKey), status: 202,
        action: "intern.provision" },
      { route: "POST /interns/{unknown}/provision", run: () => call(server, "POST", `/interns/${unknownIntern}/provision`, server.apiKey), status: 404 },
      { route: "DELETE /interns/{id} (its disk not acknowledged)", run: async () => {
        await untilStatus(state.runner!, "running")
        return call(server, "DELETE", `/interns/${state.runner}`, server.apiKey)
      }, status: 400 },
      { route: "DELETE /interns/{id}", run: () => call(server, "DELETE", `/interns/${state.runner}`, server.apiKey, { acknowledge_workspace_loss: true }),
        status: 202, action: "intern.delete" },
      { route: "DELETE /interns/{id} (never provisioned)", run: () => call(server, "DELETE", `/interns/${state.intern}`, server.apiKey), status: 202,
        action: "intern.delete" },
      { route: "DELETE /interns/{unknown}", run: () => call(server, "DELETE", `/interns/${unknownIntern}`, server.apiKey), status: 404 },

      { route: "DELETE /workspaces/{id} (it has a key)", run: () => call(server, "DELETE", `/workspaces/${state.workspace}`, operator), status: 400 },
      { route: "DELETE /keys/{hash} (the workspace's)", run: () => call(server, "DELETE", `/keys/${state.teamHash}`, operator), status: 200, action: "key.delete" },
      { route: "DELETE /workspaces/{id}", run: () => call(server, "DELETE", `/workspaces/${state.workspace}`, operator), status: 200, action: "workspace.delete" },
      { route: "DELETE /workspaces/{unknown}", run: () => call(server, "DELETE", `/workspaces/${state.workspace}`, operator), status: 404 },
      { route: "DELETE /keys/{hash} (revoke an administrator)", run: () => call(server, "DELETE", `/keys/${state.adminHash}`, operator), status: 200,
        action: "key.delete" }
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
    for (const secret of [byokSecret, providerSecret, state.secret!, state.adminKey!, state.teamKey!]) assert.notInclude(text, secret)
    const grant = all.find((e) => e.action === "key.create" && e.target.id === state.adminHash)!
    assert.deepInclude(grant, { workspace_id: state.home })
    assert.deepInclude(grant.after as object, { kind: "management", creator_user_id: "user_ops" })
    const byRoute = (action: string, id: string) => all.filter((e) => e.action === action && e.target.id === id)
    assert.deepInclude(byRoute("intern.create", state.runner!)[0]!.after as object, { name: "audited-runner", provision: true })
    assert.deepStrictEqual(byRoute("intern.suspend", state.runner!).map((e) => [e.before, e.after]), [[{ status: "running" }, { status: "stopped" }]])
    assert.deepStrictEqual(byRoute("intern.provision", state.runner!).map((e) => [e.before, e.after]), [[{ status: "stopped" }, { status: "queued" }]])
    assert.deepStrictEqual(byRoute("intern.delete", state.runner!).map((e) => e.after), [{ status: "destroying" }])
    assert.isTrue(all.filter((e) => e.target.type === "intern").every((e) => e.workspace_id === state.home && e.actor.key_hash !== null))
    const disabled = byRoute("provider.disable", "audited")[0]!
    assert.deepStrictEqual([disabled.before, disabled.after, disabled.workspace_id], [{ enabled: true }, { enabled: false }, null])
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
    // The store itself refuses to change a past entry, whatever client asks.
    const refused = await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.flip(sql`UPDATE audit_log SET after_json = ${JSON.stringify({ name: "forged" })} WHERE id = ${victim.id}`)))
    const said = [refused.message, String(refused.cause), String((refused.cause as { cause?: unknown } | undefined)?.cause)].join(" ")
    assert.include(said, "append-only")
    // The database's owner can drop that guard: the chain still tells.
    await server.run(dropAppendOnly)
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
