/**
 * Two tenants on one running gateway, set up through its API as an operator would, and a valid
 * request for every operation of the served OpenAPI document: what the fuzz suite mutates, and
 * what the unknown-fields and authentication tests send.
 *
 * - Tenant A is the workspace `default`: its standard key (the bootstrap one) and the operator's
 *   management key of user scope (the bootstrap one; the operator also administers B).
 * - Tenant B is a second workspace: a standard key, a management key of workspace scope, and a
 *   management key of user scope of a user who is a member of B only.
 * - A's resources (a key, an intern, a BYOK credential, a file and a batch) are what B's
 *   credentials must never reach.
 */
export type Credential =
  | "none"
  | "malformed"
  | "unknown"
  | "standardA"
  | "managementA"
  | "standardB"
  | "managementScopedB"
  | "managementUserB"

/** The credentials of tenant B, which must never reach a resource of A. */
export const tenantB: ReadonlyArray<Credential> = ["standardB", "managementScopedB", "managementUserB"]

export interface Tenants {
  readonly origin: string
  readonly keys: Readonly<Record<Credential, string | undefined>>
  readonly a: {
    readonly workspace: string
    readonly keyHash: string
    readonly intern: string
    readonly byok: string
    readonly file: string
    readonly batch: string
  }
  readonly b: { readonly workspace: string }
}

interface Reply {
  readonly status: number
  readonly json: any
  readonly text: string
}

/** One JSON call; throws unless it succeeds. */
const ok = async (origin: string, key: string, method: string, path: string, body?: unknown): Promise<any> => {
  const response = await fetch(`${origin}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 400)}`)
  return text === "" ? undefined : JSON.parse(text)
}

/** The lines of a batch input file: one embeddings request of the built-in local model. */
const batchInput = `${JSON.stringify({ custom_id: "one", method: "POST", url: "/v1/embeddings", body: { model: "switchyard/local-embed", input: "hi", dimensions: 8 } })}\n`

/** Uploads a batch input file for `key` (multipart, as OpenAI's SDK sends it); its id. */
const uploadFile = async (origin: string, key: string): Promise<string> => {
  const form = new FormData()
  form.append("purpose", "batch")
  form.append("file", new Blob([batchInput], { type: "application/jsonl" }), "input.jsonl")
  const response = await fetch(`${origin}/api/v1/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`POST /files: ${response.status} ${text.slice(0, 400)}`)
  return JSON.parse(text).id as string
}

/** Sets up tenant B and A's resources on the gateway at `origin`, with A's bootstrap keys. */
export const setUp = async (origin: string, bootstrap: { readonly managementKey: string; readonly apiKey: string }): Promise<Tenants> => {
  const operator = bootstrap.managementKey
  const workspaceA = (await ok(origin, operator, "GET", "/key")).data.workspace_id as string
  const workspaceB = (await ok(origin, operator, "POST", "/workspaces", { name: "Tenant B", slug: `tenant-b-${Date.now().toString(36)}` })).data.id as string
  await ok(origin, operator, "POST", `/workspaces/${workspaceB}/members/add`, { user_ids: ["user_tenant_b"] })
  const standardB = (await ok(origin, operator, "POST", "/keys", { name: "B app", workspace_id: workspaceB })).key as string
  const managementScopedB = (await ok(origin, operator, "POST", "/keys", {
    name: "B admin",
    workspace_id: workspaceB,
    kind: "management",
    scope: "workspace"
  })).key as string
  const managementUserB = (await ok(origin, operator, "POST", "/keys", {
    name: "B member",
    workspace_id: workspaceB,
    creator_user_id: "user_tenant_b",
    kind: "management"
  })).key as string
  const keyHash = (await ok(origin, operator, "POST", "/keys", { name: "A target" })).data.hash as string
  const intern = (await ok(origin, bootstrap.apiKey, "POST", "/interns", { name: "target" })).id as string
  const byok = (await ok(origin, operator, "POST", "/byok", { provider: "zeta", key: "sk-target-0123456789abcdef" })).data.id as string
  const file = await uploadFile(origin, bootstrap.apiKey)
  const batch = (await ok(origin, bootstrap.apiKey, "POST", "/batches", { input_file_id: file, endpoint: "/v1/embeddings", completion_window: "24h" })).id as string
  return {
    origin,
    keys: {
      none: undefined,
      malformed: "not-a-key",
      unknown: `sk-sy-v1-${"0".repeat(64)}`,
      standardA: bootstrap.apiKey,
      managementA: operator,
      standardB,
      managementScopedB,
      managementUserB
    },
    a: { workspace: workspaceA, keyHash, intern, byok, file, batch },
    b: { workspace: workspaceB }
  }
}

/** Who a route is for: a standard key, a management key, or anyone (public). */
export type Audience = "standard" | "management" | "public"

/** A valid request of one operation: path parameters, query, body, and who may send it. */
export interface ValidRequest {
  readonly audience: Audience
  readonly params?: Readonly<Record<string, string>>
  readonly query?: Readonly<Record<string, string>>
  /** A JSON body; `n` makes what must be unique (names, slugs) unique. */
  readonly body?: (n: number) => unknown
  /** A multipart body (the file upload). */
  readonly multipart?: true
  /** The path parameters that name a resource of tenant A (what B must never reach). */
  readonly ownedByA?: ReadonlyArray<string>
}

const embeddings = () => ({ model: "switchyard/local-embed", input: ["hello", "world"], dimensions: 8, provider: { sort: "price" } })
const rerank = () => ({ model: "switchyard/local-rerank", query: "what grows", documents: ["plants grow", "trains leave"], top_n: 1 })
// Ids that name nothing: operations that destroy or start things are sent at these.
const nothing = { hash: "0".repeat(64), id: "00000000-0000-4000-8000-000000000000", intern: "no-such-intern", file: "file-nothing", batch: "batch_nothing" }

/** A valid request of every operation of the API, by `operationId`. */
export const validRequests = (t: Tenants): Readonly<Record<string, ValidRequest>> => ({
  health: { audience: "public" },
  "keys.list": { audience: "management", query: { include_disabled: "true", workspace_id: t.a.workspace } },
  "keys.create": { audience: "management", body: (n) => ({ name: `fuzz ${n}`, limit: 5, limit_reset: "daily" }) },
  "keys.current": { audience: "standard" },
  "keys.get": { audience: "management", params: { hash: t.a.keyHash }, ownedByA: ["hash"] },
  "keys.update": { audience: "management", params: { hash: t.a.keyHash }, body: (n) => ({ name: `A target ${n}` }), ownedByA: ["hash"] },
  "keys.delete": { audience: "management", params: { hash: nothing.hash } },
  "interns.create": { audience: "standard", body: (n) => ({ name: `fz${n % 100000}`, description: "fuzz" }) },
  "interns.list": { audience: "standard", query: { limit: "5" } },
  "interns.get": { audience: "standard", params: { internId: t.a.intern }, ownedByA: ["internId"] },
  "interns.update": { audience: "standard", params: { internId: t.a.intern }, body: () => ({ description: "still the target" }), ownedByA: ["internId"] },
  "interns.delete": { audience: "standard", params: { internId: nothing.intern }, body: () => ({ acknowledge_workspace_loss: true }) },
  "interns.provision": { audience: "standard", params: { internId: nothing.intern } },
  "interns.suspend": { audience: "standard", params: { internId: t.a.intern }, ownedByA: ["internId"] },
  "credits.get": { audience: "management", query: { workspace_id: t.a.workspace } },
  "credits.add": { audience: "management", body: () => ({ amount: 0.01, note: "fuzz" }) },
  "byok.list": { audience: "management", query: { limit: "5" } },
  "byok.create": { audience: "management", body: (n) => ({ provider: "zeta", key: `sk-fuzz-${n}-0123456789abcdef`, name: `fuzz ${n}` }) },
  "byok.get": { audience: "management", params: { id: t.a.byok }, ownedByA: ["id"] },
  "byok.update": { audience: "management", params: { id: t.a.byok }, body: () => ({ name: "target" }), ownedByA: ["id"] },
  "byok.delete": { audience: "management", params: { id: nothing.id } },
  createEmbeddings: { audience: "standard", body: embeddings },
  listEmbeddingsModels: { audience: "standard" },
  planEmbeddings: { audience: "standard", body: embeddings },
  createRerank: { audience: "standard", body: rerank },
  planRerank: { audience: "standard", body: rerank },
  listRerankModels: { audience: "standard" },
  getModels: { audience: "public" },
  listModelsCount: { audience: "public" },
  listModelsUser: { audience: "standard" },
  getModel: { audience: "public", params: { id: "local-embed" } },
  getModelByPath: { audience: "public", params: { author: "switchyard", slug: "local-embed" } },
  getOpenRouterModel: { audience: "public", params: { author: "switchyard", slug: "local-embed" } },
  "workspaces.list": { audience: "management" },
  "workspaces.create": { audience: "management", body: (n) => ({ name: `Fuzz ${n}`, slug: `fuzz-${n}-${Date.now().toString(36)}` }) },
  "workspaces.get": { audience: "management", params: { id: t.a.workspace }, ownedByA: ["id"] },
  "workspaces.update": { audience: "management", params: { id: t.a.workspace }, body: () => ({ description: "tenant A" }), ownedByA: ["id"] },
  "workspaces.delete": { audience: "management", params: { id: nothing.id } },
  "workspaces.listMembers": { audience: "management", params: { id: t.a.workspace }, ownedByA: ["id"] },
  "workspaces.addMembers": { audience: "management", params: { id: t.a.workspace }, body: () => ({ user_ids: ["user_fuzz"] }), ownedByA: ["id"] },
  "workspaces.removeMembers": { audience: "management", params: { id: t.a.workspace }, body: () => ({ user_ids: ["user_fuzz"] }), ownedByA: ["id"] },
  "workspaces.listBudgets": { audience: "management", params: { workspace_ref: t.a.workspace }, ownedByA: ["workspace_ref"] },
  "workspaces.getBudget": { audience: "management", params: { workspace_ref: t.a.workspace, interval: "monthly" }, ownedByA: ["workspace_ref"] },
  "workspaces.setBudget": {
    audience: "management",
    params: { workspace_ref: t.a.workspace, interval: "monthly" },
    body: () => ({ limit_usd: 1000 }),
    ownedByA: ["workspace_ref"]
  },
  "workspaces.deleteBudget": { audience: "management", params: { workspace_ref: t.a.workspace, interval: "daily" }, ownedByA: ["workspace_ref"] },
  "activity.generation": { audience: "standard", query: { id: "gen-nothing" } },
  "activity.activity": { audience: "management", query: { workspace_id: t.a.workspace } },
  "activity.failures": { audience: "management", query: { workspace_id: t.a.workspace } },
  "providers.list": { audience: "standard" },
  "providerAdmin.create": {
    audience: "management",
    body: (n) => ({ slug: `fuzz-${n}`, name: `Fuzz ${n}`, adapter: "openai", base_url: "http://127.0.0.1:9/v1", data_collection: "deny", endpoints: [] })
  },
  "providers.endpoints": { audience: "standard", params: { author: "switchyard", slug: "local-embed" } },
  "providerAdmin.get": { audience: "management", params: { slug: "local" } },
  "providerAdmin.update": { audience: "management", params: { slug: "no-such-provider" }, body: () => ({ name: "x" }) },
  "providerAdmin.delete": { audience: "management", params: { slug: "no-such-provider" } },
  "providerAdmin.test": { audience: "management", params: { slug: "no-such-provider" } },
  "audit.list": { audience: "management", query: { limit: "5", workspace_id: t.a.workspace } },
  "audit.verify": { audience: "management" },
  "sessions.me": { audience: "standard" },
  "sessions.list": { audience: "management", query: { user_id: nothing.id } },
  "sessions.revoke": { audience: "management", params: { id: nothing.id } },
  "sessions.revokeAll": { audience: "management", query: { user_id: nothing.id } },
  "files.upload": { audience: "standard", multipart: true },
  "files.list": { audience: "standard", query: { limit: "5" } },
  "files.get": { audience: "standard", params: { file_id: t.a.file }, ownedByA: ["file_id"] },
  "files.delete": { audience: "standard", params: { file_id: nothing.file } },
  "files.content": { audience: "standard", params: { file_id: t.a.file }, ownedByA: ["file_id"] },
  "batches.create": { audience: "standard", body: () => ({ input_file_id: t.a.file, endpoint: "/v1/embeddings", completion_window: "24h" }) },
  "batches.list": { audience: "standard", query: { limit: "5" } },
  "batches.get": { audience: "standard", params: { batch_id: t.a.batch }, ownedByA: ["batch_id"] },
  "batches.cancel": { audience: "standard", params: { batch_id: nothing.batch } },
  cohereRerankV2: { audience: "standard", body: rerank },
  cohereEmbedV2: { audience: "standard", body: () => ({ model: "switchyard/local-embed", texts: ["a"], input_type: "search_document", embedding_types: ["float"] }) },
  cohereEmbedV1: { audience: "standard", body: () => ({ model: "switchyard/local-embed", texts: ["a"] }) }
})

/** The credential a valid request of `audience` is sent with, in tenant A. */
export const credentialOf = (audience: Audience): Credential =>
  audience === "management" ? "managementA" : audience === "standard" ? "standardA" : "none"

/** An OpenAPI path (`/api/v1/keys/{hash}`) with its parameters filled in, each URI-encoded. */
export const fill = (path: string, params: Readonly<Record<string, string>>): string =>
  path.replace(/\{([^}]+)\}/gu, (_, name: string) => encodeURIComponent(params[name] ?? "x"))

/** One request through fetch; the status, text and parsed JSON (if any). */
export const request = async (
  origin: string,
  options: { readonly method: string; readonly path: string; readonly key?: string | undefined; readonly body?: unknown }
): Promise<Reply> => {
  const response = await fetch(`${origin}${options.path}`, {
    method: options.method,
    headers: {
      ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
      ...(options.body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })
  const text = await response.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, json, text }
}
