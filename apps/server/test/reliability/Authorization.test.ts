import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { type Answer, isAnswer, send } from "./RawHttp.ts"
import { record } from "./Reliability.ts"

const regionalHost = "eu.switchyard.test"

type Credential =
  | "no key"
  | "malformed"
  | "unknown"
  | "disabled"
  | "expired"
  | "disabled management"
  | "expired management"
  | "standard"
  | "management"
  | "other standard"
  | "other management"
  | "regional, no key"
  | "regional standard"
  | "regional management"

const credentials: ReadonlyArray<Credential> = [
  "no key", "malformed", "unknown", "disabled", "expired", "disabled management", "expired management", "standard", "management", "other standard", "other management",
  "regional, no key", "regional standard", "regional management"
]

interface Workspace {
  readonly id: string
  readonly userId: string
  readonly standard: string
  readonly management: string
  /** Strings that only this workspace's data contains. */
  readonly canaries: Array<string>
  internId: string
  byokId: string
  keyHash: string
  generationId: string
}

interface Request {
  readonly method: string
  readonly path: string
  readonly body?: unknown
}

interface Endpoint {
  readonly name: string
  readonly intern?: boolean
  readonly public?: boolean
  /** The request, aimed at workspace A's resources; may create a throwaway resource of A first. */
  readonly request: () => Promise<Request>
  /** Status for each valid key of workspace A, and for each key of workspace B aiming at A. */
  readonly expect: Readonly<Partial<Record<"standard" | "management" | "other standard" | "other management", number | string>>>
  /** After a key of B tried, A's resource must be as it was. */
  readonly unchanged?: () => Promise<string>
}

const envelope = (reply: Answer) => {
  const code = reply.json?.error?.code
  return typeof code === "string" ? code : reply.status
}

describe("reliability: authorization matrix", () => {
  let upstream: FakeUpstream.FakeServer
  let gateway: Gateway
  let a: Workspace
  let b: Workspace
  let disabledKey: string
  let expiredKey: string
  const disabledManagement = KeySecret.generate()
  const expiredManagement = KeySecret.generate()
  let cells = 0
  let leaks = 0
  const leakReports: Array<string> = []

  const raw = (key: string | undefined, request: Request, host?: string) =>
    send(gateway.server.origin, {
      method: request.method,
      path: `/api/v1${request.path}`,
      headers: {
        ...(key !== undefined ? { authorization: key } : {}),
        ...(host !== undefined ? { host } : {}),
        ...(request.body !== undefined ? { "content-type": "application/json" } : {})
      },
      ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {})
    })

  const as = async (key: string, method: string, path: string, body?: unknown) => {
    const reply = await raw(`Bearer ${key}`, { method, path, ...(body !== undefined ? { body } : {}) })
    if (!isAnswer(reply) || reply.status >= 300) throw new Error(`${method} ${path}: ${JSON.stringify(reply).slice(0, 400)}`)
    return reply.json
  }

  const seedWorkspace = async (label: string, keys?: { readonly standard: string; readonly management: string }): Promise<Workspace> => {
    const canary = (what: string) => `${label}-${what}-${Crypto.randomBytes(6).toString("hex")}`
    let ws: Workspace
    if (keys === undefined) {
      const id = Crypto.randomUUID()
      const userId = Crypto.randomUUID()
      const standard = KeySecret.generate()
      const management = KeySecret.generate()
      await gateway.server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO workspaces (id, slug, name) VALUES (${id}, ${canary("slug").toLowerCase()}, ${canary("workspace")})`
        yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES (${userId}, ${canary("user")}, ${id})`
        yield* sql`INSERT INTO memberships (user_id, workspace_id, role) VALUES (${userId}, ${id}, 'owner')`
        for (const [kind, secret] of [["standard", standard], ["management", management]] as const) {
          yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id)
            VALUES (${Crypto.randomUUID()}, ${KeySecret.hash(secret)}, ${kind}, ${canary("key")}, ${`${secret.slice(0, 12)}...${secret.slice(-3)}`}, ${userId}, ${id})`
        }
      }))
      ws = { id, userId, standard, management, canaries: [id, userId], internId: "", byokId: "", keyHash: "", generationId: "" }
    } else {
      const current = (await as(keys.management, "GET", "/key")).data
      ws = { id: current.workspace_id, userId: current.creator_user_id, ...keys, canaries: [current.workspace_id, current.creator_user_id], internId: "", byokId: "", keyHash: "", generationId: "" }
    }
    const note = canary("note")
    await as(ws.management, "POST", "/credits", { amount: 50, note })
    const keyName = canary("keyname")
    const created = await as(ws.management, "POST", "/keys", { name: keyName })
    ws.keyHash = created.data.hash
    const description = canary("description")
    const instructions = canary("instructions")
    const intern = await as(ws.standard, "POST", "/interns", { name: `${label.toLowerCase()}-intern`, description, instructions })
    ws.internId = intern.id
    const byokName = canary("byok")
    const byokSecret = `sk-${canary("byoksecret")}`
    const byok = await as(ws.management, "POST", "/byok", { provider: "zeta", key: byokSecret, name: byokName })
    ws.byokId = byok.data.id
    await as(ws.management, "PUT", `/workspaces/${ws.id}/budgets/daily`, { limit_usd: 1000 })
    ws.generationId = (await as(ws.standard, "POST", "/embeddings", { model: "acme/embed", input: canary("input") })).id
    const hashes = (await as(ws.management, "GET", "/keys?include_disabled=true")).data.map((k: any) => k.hash)
    ws.canaries.push(ws.generationId, note, keyName, description, instructions, byokName, byokSecret, ws.internId, ws.byokId, ...hashes)
    return ws
  }

  beforeAll(async () => {
    upstream = await FakeOpenAi.start()
    gateway = await startGateway({
      config: { providers: [provider("alpha", upstream.url, {}, [endpoint("acme/embed", { upstream_model: "embed" })])] },
      env: { SWITCHYARD_REGIONAL_HOSTS: regionalHost, SWITCHYARD_RATE_LIMIT: "100000/60s" }
    })
    a = await seedWorkspace("A", { standard: gateway.server.apiKey, management: gateway.server.managementKey })
    b = await seedWorkspace("B")
    disabledKey = (await as(a.management, "POST", "/keys", { name: "to disable" })).key
    await as(a.management, "PATCH", `/keys/${KeySecret.hash(disabledKey)}`, { disabled: true })
    expiredKey = (await as(a.management, "POST", "/keys", { name: "to expire", expires_at: new Date(Date.now() + 3_600_000).toISOString() })).key
    await gateway.server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE api_keys SET expires_at = ${new Date(Date.now() - 60_000)} WHERE hash = ${KeySecret.hash(expiredKey)}`
      for (const [secret, disabled, expires] of [[disabledManagement, true, null], [expiredManagement, false, new Date(Date.now() - 60_000)]] as const) {
        yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id, disabled, expires_at)
          VALUES (${Crypto.randomUUID()}, ${KeySecret.hash(secret)}, 'management', 'matrix', ${secret.slice(0, 12)}, ${a.userId}, ${a.id},
            ${disabled}, ${expires})`
      }
    }))
  }, 60_000)

  afterAll(async () => {
    record("authorization", { inputsTried: cells, requests: cells, leaksFound: leaks })
    await gateway?.close()
    await upstream?.close()
  })

  const throwawayKey = async () => (await as(a.management, "POST", "/keys", { name: "throwaway" })).data.hash as string
  const throwawayIntern = async () => (await as(a.standard, "POST", "/interns", { name: `t${Crypto.randomBytes(4).toString("hex")}` })).id as string
  const throwawayByok = async () => (await as(a.management, "POST", "/byok", { provider: "zeta", key: "sk-throwaway-0123456789" })).data.id as string
  const snapshot = (path: string) => async () => JSON.stringify((await as(a.management, "GET", path)).data ?? null)
  const internSnapshot = (id: () => string) => async () => JSON.stringify(await as(a.standard, "GET", `/interns/${id()}`))
  let lastId = ""
  const remember = (id: string) => (lastId = id)

  const embeddingBody = { model: "acme/embed", input: "who pays" }
  const throwawayWorkspace = async () => (await as(a.management, "POST", "/workspaces", { name: "throwaway", slug: `t-${Crypto.randomBytes(4).toString("hex")}` })).data.id as string
  const management = (ok: number) => ({ standard: 403, management: ok, "other standard": 403, "other management": 404 })

  const endpoints: ReadonlyArray<Endpoint> = [
    { name: "GET /health", public: true, request: async () => ({ method: "GET", path: "/health" }), expect: {} },
    { name: "GET /openapi.json", public: true, request: async () => ({ method: "GET", path: "/openapi.json" }), expect: {} },
    {
      name: "GET /keys",
      request: async () => ({ method: "GET", path: "/keys?include_disabled=true" }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 200 }
    },
    {
      name: "GET /keys?workspace_id=A",
      request: async () => ({ method: "GET", path: `/keys?workspace_id=${a.id}` }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 404 }
    },
    {
      name: "POST /keys",
      request: async () => ({ method: "POST", path: "/keys", body: { name: "matrix" } }),
      expect: { standard: 403, management: 201, "other standard": 403, "other management": 201 }
    },
    {
      name: "POST /keys in A",
      request: async () => ({ method: "POST", path: "/keys", body: { name: "matrix", workspace_id: a.id } }),
      expect: { standard: 403, management: 201, "other standard": 403, "other management": 404 }
    },
    { name: "GET /key", request: async () => ({ method: "GET", path: "/key" }), expect: { standard: 200, management: 200, "other standard": 200, "other management": 200 } },
    {
      name: "GET /keys/{hash of A}",
      request: async () => ({ method: "GET", path: `/keys/${a.keyHash}` }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 404 }
    },
    {
      name: "PATCH /keys/{hash of A}",
      request: async () => ({ method: "PATCH", path: `/keys/${remember(await throwawayKey())}`, body: { name: "renamed by matrix", disabled: true } }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 404 },
      unchanged: async () => JSON.stringify((await as(a.management, "GET", `/keys/${lastId}`)).data.name)
    },
    {
      name: "DELETE /keys/{hash of A}",
      request: async () => ({ method: "DELETE", path: `/keys/${remember(await throwawayKey())}` }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 404 },
      unchanged: async () => JSON.stringify((await as(a.management, "GET", `/keys/${lastId}`)).data.hash)
    },
    {
      name: "POST /interns",
      intern: true,
      request: async () => ({ method: "POST", path: "/interns", body: { name: `m${Crypto.randomBytes(4).toString("hex")}` } }),
      expect: { standard: 201, management: 201, "other standard": 201, "other management": 201 }
    },
    {
      name: "POST /interns in A",
      intern: true,
      request: async () => ({ method: "POST", path: "/interns", body: { name: `m${Crypto.randomBytes(4).toString("hex")}`, workspace_id: a.id } }),
      expect: { standard: 201, management: 201, "other standard": 403, "other management": 403 }
    },
    { name: "GET /interns", intern: true, request: async () => ({ method: "GET", path: "/interns" }), expect: { standard: 200, management: 200, "other standard": 200, "other management": 200 } },
    {
      name: "GET /interns?workspace_id=A",
      intern: true,
      request: async () => ({ method: "GET", path: `/interns?workspace_id=${a.id}` }),
      expect: { standard: 200, management: 200, "other standard": 403, "other management": 403 }
    },
    {
      name: "GET /interns/{id of A}",
      intern: true,
      request: async () => ({ method: "GET", path: `/interns/${a.internId}` }),
      expect: { standard: 200, management: 200, "other standard": "not_found", "other management": "not_found" }
    },
    {
      name: "PATCH /interns/{id of A}",
      intern: true,
      request: async () => ({ method: "PATCH", path: `/interns/${a.internId}`, body: { description: "changed by matrix" } }),
      expect: { standard: 200, management: 200, "other standard": "not_found", "other management": "not_found" },
      unchanged: internSnapshot(() => a.internId)
    },
    {
      name: "DELETE /interns/{id of A}",
      intern: true,
      request: async () => ({ method: "DELETE", path: `/interns/${remember(await throwawayIntern())}` }),
      expect: { standard: 202, management: 202, "other standard": "not_found", "other management": "not_found" },
      unchanged: internSnapshot(() => lastId)
    },
    {
      name: "POST /interns/{id of A}/provision",
      intern: true,
      request: async () => ({ method: "POST", path: `/interns/${remember(await throwawayIntern())}/provision` }),
      expect: { standard: 202, management: 202, "other standard": "not_found", "other management": "not_found" },
      unchanged: internSnapshot(() => lastId)
    },
    {
      name: "POST /interns/{id of A}/suspend",
      intern: true,
      request: async () => ({ method: "POST", path: `/interns/${a.internId}/suspend` }),
      expect: { standard: 200, management: 200, "other standard": "not_found", "other management": "not_found" },
      unchanged: internSnapshot(() => a.internId)
    },
    {
      name: "GET /credits",
      request: async () => ({ method: "GET", path: "/credits" }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 200 }
    },
    {
      name: "GET /credits?workspace_id=A",
      request: async () => ({ method: "GET", path: `/credits?workspace_id=${a.id}` }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 404 }
    },
    {
      name: "POST /credits to A",
      request: async () => ({ method: "POST", path: "/credits", body: { amount: 1, workspace_id: a.id } }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 404 },
      unchanged: snapshot("/credits")
    },
    {
      name: "GET /byok",
      request: async () => ({ method: "GET", path: "/byok" }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 200 }
    },
    {
      name: "GET /byok?workspace_id=A",
      request: async () => ({ method: "GET", path: `/byok?workspace_id=${a.id}` }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 404 }
    },
    {
      name: "POST /byok in A",
      request: async () => ({ method: "POST", path: "/byok", body: { provider: "zeta", key: "sk-matrix-0123456789abc", workspace_id: a.id } }),
      expect: { standard: 403, management: 201, "other standard": 403, "other management": 404 }
    },
    {
      name: "GET /byok/{id of A}",
      request: async () => ({ method: "GET", path: `/byok/${a.byokId}` }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 404 }
    },
    {
      name: "PATCH /byok/{id of A}",
      request: async () => ({ method: "PATCH", path: `/byok/${remember(await throwawayByok())}`, body: { name: "changed by matrix", key: "sk-replaced-0123456789" } }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 404 },
      unchanged: async () => JSON.stringify((await as(a.management, "GET", `/byok/${lastId}`)).data)
    },
    {
      name: "DELETE /byok/{id of A}",
      request: async () => ({ method: "DELETE", path: `/byok/${remember(await throwawayByok())}` }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 404 },
      unchanged: async () => JSON.stringify((await as(a.management, "GET", `/byok/${lastId}`)).data)
    },
    {
      name: "POST /embeddings",
      request: async () => ({ method: "POST", path: "/embeddings", body: embeddingBody }),
      expect: { standard: 200, management: 403, "other standard": 200, "other management": 403 }
    },
    {
      name: "POST /embeddings/plan",
      request: async () => ({ method: "POST", path: "/embeddings/plan", body: embeddingBody }),
      expect: { standard: 200, management: 403, "other standard": 200, "other management": 403 }
    },
    {
      name: "GET /workspaces",
      request: async () => ({ method: "GET", path: "/workspaces" }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 200 }
    },
    {
      name: "POST /workspaces",
      request: async () => ({ method: "POST", path: "/workspaces", body: { name: "matrix", slug: `m-${Crypto.randomBytes(4).toString("hex")}` } }),
      expect: { standard: 403, management: 201, "other standard": 403, "other management": 201 }
    },
    { name: "GET /workspaces/{A}", request: async () => ({ method: "GET", path: `/workspaces/${a.id}` }), expect: management(200) },
    {
      name: "PATCH /workspaces/{A}",
      request: async () => ({ method: "PATCH", path: `/workspaces/${a.id}`, body: { description: "changed by matrix" } }),
      expect: management(200),
      unchanged: async () => JSON.stringify((await as(a.management, "GET", `/workspaces/${a.id}`)).data)
    },
    {
      name: "DELETE /workspaces/{of A's user}",
      request: async () => ({ method: "DELETE", path: `/workspaces/${remember(await throwawayWorkspace())}` }),
      expect: management(200),
      unchanged: async () => JSON.stringify((await as(a.management, "GET", `/workspaces/${lastId}`)).data)
    },
    { name: "GET /workspaces/{A}/members", request: async () => ({ method: "GET", path: `/workspaces/${a.id}/members` }), expect: management(200) },
    {
      name: "POST /workspaces/{A}/members/add",
      request: async () => ({ method: "POST", path: `/workspaces/${a.id}/members/add`, body: { user_ids: [`matrix-${Crypto.randomBytes(4).toString("hex")}`] } }),
      expect: management(200),
      unchanged: async () => JSON.stringify((await as(a.management, "GET", `/workspaces/${a.id}/members?limit=100`)).data)
    },
    {
      name: "POST /workspaces/{A}/members/remove",
      request: async () => ({ method: "POST", path: `/workspaces/${a.id}/members/remove`, body: { user_ids: [remember(`gone-${Crypto.randomBytes(4).toString("hex")}`)] } }),
      expect: management(200),
      unchanged: async () => JSON.stringify((await as(a.management, "GET", `/workspaces/${a.id}/members?limit=100`)).data)
    },
    { name: "GET /workspaces/{A}/budgets", request: async () => ({ method: "GET", path: `/workspaces/${a.id}/budgets` }), expect: management(200) },
    { name: "GET /workspaces/{A}/budgets/daily", request: async () => ({ method: "GET", path: `/workspaces/${a.id}/budgets/daily` }), expect: management(200) },
    {
      name: "PUT /workspaces/{A}/budgets/monthly",
      request: async () => ({ method: "PUT", path: `/workspaces/${a.id}/budgets/monthly`, body: { limit_usd: 5000 + Math.floor(Math.random() * 1000) } }),
      expect: management(200),
      unchanged: async () => JSON.stringify((await as(a.management, "GET", `/workspaces/${a.id}/budgets`)).data)
    },
    {
      name: "DELETE /workspaces/{A}/budgets/weekly",
      request: async () => {
        await as(a.management, "PUT", `/workspaces/${a.id}/budgets/weekly`, { limit_usd: 2000 })
        return { method: "DELETE", path: `/workspaces/${a.id}/budgets/weekly` }
      },
      expect: management(200),
      unchanged: async () => JSON.stringify((await as(a.management, "GET", `/workspaces/${a.id}/budgets`)).data)
    },
    {
      name: "GET /generation?id={of A}",
      request: async () => ({ method: "GET", path: `/generation?id=${a.generationId}` }),
      expect: { standard: 200, management: 200, "other standard": 404, "other management": 404 }
    },
    {
      name: "GET /activity",
      request: async () => ({ method: "GET", path: "/activity" }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 200 }
    },
    { name: "GET /activity?workspace_id=A", request: async () => ({ method: "GET", path: `/activity?workspace_id=${a.id}` }), expect: management(200) },
    {
      name: "GET /audit-log?workspace_id=A",
      request: async () => ({ method: "GET", path: `/audit-log?limit=500&workspace_id=${a.id}` }),
      expect: management(200)
    },
    {
      name: "GET /providers/alpha",
      request: async () => ({ method: "GET", path: "/providers/alpha" }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 403 }
    },
    {
      name: "PATCH /providers/alpha (a config-file provider)",
      request: async () => ({ method: "PATCH", path: "/providers/alpha", body: { name: "renamed" } }),
      expect: { standard: 403, management: 409, "other standard": 403, "other management": 403 }
    },
    {
      name: "GET /audit-log/verify",
      request: async () => ({ method: "GET", path: "/audit-log/verify" }),
      expect: { standard: 403, management: 200, "other standard": 403, "other management": 403 }
    },
    { name: "GET /providers", request: async () => ({ method: "GET", path: "/providers" }), expect: { standard: 200, management: 200, "other standard": 200, "other management": 200 } },
    {
      name: "GET /models/acme/embed/endpoints",
      request: async () => ({ method: "GET", path: "/models/acme/embed/endpoints" }),
      expect: { standard: 200, management: 200, "other standard": 200, "other management": 200 }
    },
    {
      name: "GET /embeddings/models",
      request: async () => ({ method: "GET", path: "/embeddings/models" }),
      expect: { standard: 200, management: 200, "other standard": 200, "other management": 200 }
    },
    // The model listing is public, as OpenRouter's is; a key's own view needs the key.
    { name: "GET /models", public: true, request: async () => ({ method: "GET", path: "/models" }), expect: {} },
    { name: "GET /models/count", public: true, request: async () => ({ method: "GET", path: "/models/count" }), expect: {} },
    { name: "GET /models/{id}", public: true, request: async () => ({ method: "GET", path: "/models/acme%2Fembed" }), expect: {} },
    { name: "GET /model/{author}/{slug}", public: true, request: async () => ({ method: "GET", path: "/model/acme/embed" }), expect: {} },
    {
      name: "GET /models/user",
      request: async () => ({ method: "GET", path: "/models/user" }),
      expect: { standard: 200, management: 200, "other standard": 200, "other management": 200 }
    }
  ]

  const authorizationOf = (credential: Credential): string | undefined => {
    switch (credential) {
      case "no key":
      case "regional, no key":
        return undefined
      case "malformed":
        return "Bearer not-a-key"
      case "unknown":
        return `Bearer ${KeySecret.generate()}`
      case "disabled":
        return `Bearer ${disabledKey}`
      case "expired":
        return `Bearer ${expiredKey}`
      case "disabled management":
        return `Bearer ${disabledManagement}`
      case "expired management":
        return `Bearer ${expiredManagement}`
      case "standard":
      case "regional standard":
        return `Bearer ${a.standard}`
      case "management":
      case "regional management":
        return `Bearer ${a.management}`
      case "other standard":
        return `Bearer ${b.standard}`
      case "other management":
        return `Bearer ${b.management}`
    }
  }

  // What the spec and docs/decisions.md say each cell answers.
  const expected = (e: Endpoint, credential: Credential): number | string => {
    if (e.public === true) return 200
    if (credential.startsWith("regional") && e.intern === true) return 403
    const kind = credential.startsWith("regional ") ? credential.slice("regional ".length) : credential
    if (kind === "regional, no key") return 401
    const known = e.expect[kind as keyof Endpoint["expect"]]
    return known ?? 401
  }

  it("every endpoint × every credential answers the status the spec and decisions give, and nothing of another workspace", async () => {
    const mismatches: Array<string> = []
    for (const e of endpoints) {
      for (const credential of credentials) {
        const request = await e.request()
        const before = e.unchanged !== undefined && credential.startsWith("other") ? await e.unchanged() : undefined
        const reply = await raw(authorizationOf(credential), request, credential.startsWith("regional") ? regionalHost : undefined)
        cells += 1
        const want = expected(e, credential)
        if (!isAnswer(reply)) {
          mismatches.push(`${e.name} × ${credential}: no answer (${reply.error})`)
          continue
        }
        const got = typeof want === "string" ? envelope(reply) : reply.status
        if (got !== want) mismatches.push(`${e.name} × ${credential}: ${got}, expected ${want}: ${reply.text.slice(0, 200)}`)
        if (reply.status >= 400 && !e.public) {
          if (typeof reply.json?.error?.message !== "string") mismatches.push(`${e.name} × ${credential}: no envelope`)
        }
        if (credential.startsWith("regional") && e.intern === true) {
          assert.strictEqual(reply.json?.error?.metadata?.reason, "regional_host", `${e.name} × ${credential}`)
        }
        if (before !== undefined) {
          const after = await e.unchanged!()
          if (after !== before) mismatches.push(`${e.name} × ${credential}: A's resource changed from ${before} to ${after}`)
        }
        const asked = `${request.path} ${JSON.stringify(request.body ?? null)}`
        const shown = `${JSON.stringify(reply.headers)}\n${reply.text}`
        const foreign = credential.startsWith("other")
          ? a.canaries
          : credential === "standard" || credential === "management" || credential.startsWith("regional ")
          ? b.canaries
          : [...a.canaries, ...b.canaries]
        for (const canary of foreign) {
          if (!asked.includes(canary) && shown.includes(canary)) {
            leaks += 1
            leakReports.push(`${e.name} × ${credential} shows ${canary}`)
          }
        }
      }
    }
    assert.deepStrictEqual(mismatches, [])
    assert.deepStrictEqual(leakReports, [])
    assert.strictEqual(cells, endpoints.length * credentials.length)
  }, 120_000)

  it("a key of B sees only B in every listing, and the embeddings it pays for are charged to B", async () => {
    const before = await as(a.management, "GET", "/credits")
    const served = await as(b.standard, "POST", "/embeddings", embeddingBody)
    assert.isAbove(served.usage.cost, 0)
    const after = await as(a.management, "GET", "/credits")
    assert.deepStrictEqual(after, before)
    for (const path of ["/keys?include_disabled=true", "/byok", "/interns", "/activity?group_by=workspace", "/workspaces"]) {
      const listed = await as(path === "/interns" ? b.standard : b.management, "GET", path)
      const rows = (listed.data ?? []) as Array<any>
      assert.isAbove(rows.length, 0, path)
      // B's user also created workspaces of its own in the matrix; none of them is A.
      for (const row of rows) {
        if (path === "/workspaces") assert.notStrictEqual(row.id, a.id, path)
        else assert.strictEqual(row.workspace_id ?? row.workspaceId, b.id, path)
      }
      for (const canary of a.canaries) assert.notInclude(JSON.stringify(listed), canary, path)
    }
  })
})
