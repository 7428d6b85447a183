import { Switchyard } from "@switchyard/client/Switchyard"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import * as FakeCohere from "../../server/test/fakes/FakeCohere.ts"
import * as FakeOpenAi from "../../server/test/fakes/FakeOpenAi.ts"
import type { FakeServer } from "../../server/test/fakes/FakeUpstream.ts"
import { startServerProcess } from "../../server/test/support/ServerProcess.ts"
import * as KeySecret from "../../server/src/auth/KeySecret.ts"

/**
 * The gateway as `pnpm start` runs it (its own process, the embedded SQLite store in a fresh directory, the built
 * console), in front of fake OpenAI-compatible upstreams, after real traffic went through it.
 */
export interface SeededGateway {
  readonly origin: string
  readonly managementKey: string
  readonly apiKey: string
  readonly admin: Switchyard
  /** A fake OpenAI-compatible upstream for providers added through the console, and the key it takes. */
  readonly upstreamUrl: string
  readonly upstreamKey: string
  /** A batch of the bootstrap standard key's workspace, completed: five lines served, one malformed. */
  readonly batchId: string
  readonly close: () => Promise<void>
}

const consoleDir = NodePath.join(import.meta.dirname, "..", "dist")

const endpoint = (model: string, prompt: string, facts: Record<string, unknown> = {}) => ({
  model,
  upstream_model: model.split("/")[1],
  pricing: { prompt, request: "0", image: "0", audio: "0" },
  quantization: "fp16",
  dimensions: 16,
  supported_parameters: ["dimensions", "encoding_format", "input_type", "user"],
  max_batch_items: 64,
  distillable: true,
  ...facts
})

const provider = (slug: string, name: string, url: string, facts: Record<string, unknown>, endpoints: ReadonlyArray<unknown>) => ({
  slug,
  name,
  adapter: "openai",
  base_url: url,
  api_key_env: `${slug.toUpperCase()}_API_KEY`,
  data_collection: "deny",
  zdr: true,
  ...facts,
  endpoints
})

// Three providers of `acme/embed` that differ in price and data policy (alpha retains data, so a
// zero-data-retention request excludes it), one model only alpha serves, and a provider whose
// upstream always fails; and a rerank provider priced per search.
const config = (healthy: string, failing: string, cohere: string, slow: string) => ({
  providers: [
    provider("alpha", "Alpha Cloud", healthy, { zdr: false, data_collection: "allow" }, [
      endpoint("acme/embed", "0.10"),
      endpoint("acme/embed-large", "0.40", { quantization: "fp32" })
    ]),
    provider("beta", "Beta AI", healthy, {}, [endpoint("acme/embed", "0.02")]),
    provider("gamma", "Gamma Labs", healthy, {}, [endpoint("acme/embed", "0.05", { quantization: "int8" })]),
    provider("flaky", "Flaky Inc", failing, {}, [endpoint("acme/embed", "0.01")]),
    // A rerank endpoint billed per search (USD per 1,000 searches), with a dot in its id, whose
    // spend the charts and the embeddings-cache table must each show right.
    provider("delta", "Delta Rerank", cohere, { adapter: "cohere" }, [
      { model: "cohere/rerank-v3.5", upstream_model: "rerank-v3.5", task: "rerank", pricing: { search: "2" }, supported_parameters: ["max_tokens_per_doc"] }
    ]),
    // An upstream that takes its time: a batch on it is still running when the console cancels it.
    provider("sloth", "Sloth Embed", slow, {}, [endpoint("acme/slow-embed", "0.02")])
  ]
})

const texts = [
  "The quick brown fox jumps over the lazy dog",
  "Switchyard routes embeddings to the cheapest healthy provider",
  "A gateway keeps exact accounts of every request it serves",
  "Fallbacks move a request to the next provider when one fails"
]

const settle = <A>(promise: Promise<A>) => promise.then(() => true, () => false)

/**
 * Real traffic: two new keys and the bootstrap key embed with several models and preferences;
 * some requests are pinned to the failing provider and fail; two interns exist, one running.
 */
/**
 * Uploads `lines` (JSONL, one request each, or raw text for a malformed line) as a batch input
 * file and creates a batch on it for `/v1/embeddings`, as the `openai` SDK would; its id.
 */
export const submitBatch = async (origin: string, apiKey: string, lines: ReadonlyArray<unknown>): Promise<string> => {
  const text = lines.map((line) =>
    typeof line === "string" ? line : JSON.stringify({ method: "POST", url: "/v1/embeddings", ...line as object })
  ).join("\n")
  const form = new FormData()
  form.append("purpose", "batch")
  // No type of its own (sent as application/octet-stream, as the openai SDK sends a Buffer): a part
  // typed application/jsonl is read as a form field by the multipart parser (its default field
  // types include anything containing application/json).
  form.append("file", new Blob([text]), "corpus.jsonl")
  const headers = { authorization: `Bearer ${apiKey}` }
  const uploaded = await fetch(`${origin}/api/v1/files`, { method: "POST", headers, body: form })
  if (!uploaded.ok) throw new Error(`seeding: the upload answered ${uploaded.status}: ${await uploaded.text()}`)
  const file = await uploaded.json() as { readonly id: string }
  const created = await fetch(`${origin}/api/v1/batches`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
  })
  if (!created.ok) throw new Error(`seeding: the batch answered ${created.status}: ${await created.text()}`)
  return ((await created.json()) as { readonly id: string }).id
}

const seed = async (gateway: Omit<SeededGateway, "close" | "upstreamUrl" | "upstreamKey" | "batchId">): Promise<string> => {
  const { admin, origin } = gateway
  await admin.credits.add({ payload: { amount: "25", note: "console end-to-end" } })
  const batch = await admin.keys.create({ payload: { name: "ci-batch" } })
  const search = await admin.keys.create({ payload: { name: "search-api", limit: 5, limit_reset: "daily" } })
  // A limit of a tenth of a millionth of a dollar, which the console must not round to $0.00.
  await admin.keys.create({ payload: { name: "tiny-limit", limit: 0.0000001 } })
  const callers = [gateway.apiKey, batch.key, search.key].map((apiKey) => new Switchyard({ baseUrl: origin, apiKey, retry: false }))
  try {
    const requests: Array<Promise<boolean>> = []
    callers.forEach((caller, k) => {
      for (let i = 0; i < 6 + 4 * k; i++) {
        const input = texts.slice(0, 1 + ((i + k) % texts.length))
        const model = i % 3 === 2 ? "acme/embed-large" : i % 5 === 4 ? "switchyard/local-embed" : "acme/embed"
        const provider = i % 4 === 1 ? { sort: "price" as const } : i % 4 === 3 ? { order: ["gamma"] } : undefined
        requests.push(settle(caller.embeddings.create({ payload: { model, input, ...(provider ? { provider } : {}) } })))
      }
      for (let i = 0; i < k + 1; i++) {
        requests.push(settle(caller.embeddings.create({
          payload: { model: "acme/embed", input: texts[i % texts.length]!, provider: { only: ["flaky"] } }
        })))
      }
    })
    // Reranks billed per search: spend on a model whose id has a dot (`cohere/rerank-v3.5`).
    for (let i = 0; i < 3; i++) {
      requests.push(fetch(`${origin}/api/v1/rerank`, {
        method: "POST",
        headers: { authorization: `Bearer ${gateway.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "cohere/rerank-v3.5", query: "what is a gateway", documents: texts })
      }).then(async (response) => {
        if (!response.ok) throw new Error(`seeding: a rerank answered ${response.status}: ${await response.text()}`)
        return true
      }))
    }
    const outcomes = await Promise.all(requests)
    if (outcomes.filter(Boolean).length < 20) throw new Error(`seeding: only ${outcomes.filter(Boolean).length} requests succeeded`)
  } finally {
    await Promise.all(callers.map((caller) => caller.close()))
  }
  // A batch of the standard key's workspace: five lines served, one that is not JSON (before the
  // cache is turned on: the playground's request must not be answered from it).
  const batchId = await submitBatch(origin, gateway.apiKey, [
    ...texts.concat(texts[0]!.toUpperCase()).map((input, i) => ({ custom_id: `c${i}`, body: { model: "acme/embed", input } })),
    "not json"
  ])
  const standard = new Switchyard({ baseUrl: origin, apiKey: gateway.apiKey, retry: false })
  try {
    const until = Date.now() + 30_000
    while ((await standard.batches.get({ params: { batch_id: batchId } })).status !== "completed") {
      if (Date.now() > until) throw new Error("seeding: the batch did not complete within 30 s")
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  } finally {
    await standard.close()
  }
  const { data: me } = await admin.keys.current()
  await admin.workspaces.setBudget({ params: { workspace_ref: me.workspace_id, interval: "monthly" }, payload: { limit_usd: 10 } })
  // With the cache turned on, a text embedded twice is answered from it the second time.
  await admin.workspaces.update({ params: { id: me.workspace_id }, payload: { cache: true } })
  const caching = new Switchyard({ baseUrl: origin, apiKey: gateway.apiKey, retry: false })
  try {
    for (let i = 0; i < 2; i++) await caching.embeddings.create({ payload: { model: "acme/embed-large", input: texts.slice(0, 2) } })
  } finally {
    await caching.close()
  }
  // A second workspace, without credits or budgets.
  await admin.workspaces.create({ payload: { name: "Research", slug: "research" } })
  const running = await admin.interns.create({ payload: { name: "support-bot", description: "Answers support tickets" } })
  await admin.interns.create({ payload: { name: "docs-bot", description: "Keeps the handbook current" } })
  await admin.interns.provision({ params: { internId: running.id } })
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    const intern = await admin.interns.get({ params: { internId: running.id } })
    if (intern.status === "running") return batchId
    if (intern.status === "failed") throw new Error(`seeding: support-bot failed: ${intern.lastFailureMessage}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error("seeding: support-bot did not reach running within 30 s")
}

export const start = async (): Promise<SeededGateway> => {
  if (!Fs.existsSync(NodePath.join(consoleDir, "index.html"))) {
    throw new Error(`The console is not built (${consoleDir}): run \`pnpm --filter @switchyard/console build\` first`)
  }
  const healthy = await FakeOpenAi.start()
  const failing: FakeServer = await FakeOpenAi.start()
  failing.setBehaviour({ _tag: "Status", status: 503 })
  const cohere = await FakeCohere.start({ apiKey: "sk-fake" })
  const slow = await FakeOpenAi.start()
  slow.setBehaviour({ _tag: "Delay", ms: 8_000 })
  const upstreamKey = "sk-console-upstream-5678"
  const managed = await FakeOpenAi.start({ apiKey: upstreamKey })
  const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-console-e2e-"))
  const configPath = NodePath.join(dir, "switchyard.json")
  Fs.writeFileSync(configPath, JSON.stringify(config(healthy.url, failing.url, cohere.url, slow.url), null, 2))
  const managementKey = KeySecret.generate()
  const apiKey = KeySecret.generate()
  const server = await startServerProcess({
    SWITCHYARD_DATA_DIR: NodePath.join(dir, "data"),
    SWITCHYARD_CONFIG: configPath,
    SWITCHYARD_CONSOLE_DIR: consoleDir,
    SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
    SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
    SWITCHYARD_RATE_LIMIT: "off",
    ALPHA_API_KEY: "sk-fake",
    BETA_API_KEY: "sk-fake",
    GAMMA_API_KEY: "sk-fake",
    FLAKY_API_KEY: "sk-fake",
    DELTA_API_KEY: "sk-fake",
    SLOTH_API_KEY: "sk-fake"
  }, 300_000)
  const origin = server.baseUrl.replace(/\/api\/v1$/u, "")
  const admin = new Switchyard({ baseUrl: origin, apiKey: managementKey, retry: false })
  const close = async () => {
    await admin.close()
    await server.stop()
    await healthy.close()
    await failing.close()
    await cohere.close()
    await managed.close()
    await slow.close()
    Fs.rmSync(dir, { recursive: true, force: true })
  }
  let batchId: string
  try {
    batchId = await seed({ origin, managementKey, apiKey, admin })
  } catch (error) {
    await close()
    throw new Error(`${String(error)}\n${server.output()}`)
  }
  return { origin, managementKey, apiKey, admin, upstreamUrl: managed.url, upstreamKey, batchId, close }
}
