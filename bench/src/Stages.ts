import type { CpuProfile, ProfileNode } from "./Profile.ts"
import { shortPath } from "./Profile.ts"

/**
 * The CPU of a priced embeddings request, stage by stage, from a V8 CPU profile of the gateway:
 * each sample's self time goes to the stage of the innermost frame on its stack that says which
 * stage it is, looking no further than the innermost Effect run loop (see `stageOf`). A project
 * frame (apps/server/src, packages/core/src) says so by its module (and, for modules that serve
 * several stages, its function name); a library frame only when it does one thing (Schema decodes,
 * node:sqlite's client runs SQL, the HTTP client calls upstream). Frames that say nothing (Node's streams, helpers
 * shared by several stages) are passed over. A sample with no telling frame goes to a row named
 * after its innermost frame's package: the Effect runtime (a step of the run loop itself), Node's
 * HTTP and net, V8's GC and compiler.
 *
 * The profile's sample times are wall time (a thread the machine did not run is still sampled), so
 * the shares are scaled to the main thread's CPU time from /proc, not to the profile's times.
 *
 * What this cannot see: a statement the store runs is attributed to the store, not to the hold or
 * the flush that sent it (Effect builds the statement in one place and runs it in another, so the
 * stack at run time holds only the run loop and the driver).
 */
export const stages = [
  "accept and auth",
  "decode",
  "plan",
  "hold",
  "upstream call",
  "forward",
  "settle",
  "flush share",
  "log and metrics",
  "write",
  "request handler (glue)",
  "store: SQL engine and driver",
  "effect http server",
  "effect runtime (no project frame)",
  "node http, net and streams",
  "gc",
  "v8 (program, compiler)",
  "other"
] as const

export type Stage = (typeof stages)[number]

interface Rule {
  /** A path prefix (repository-relative, or package-relative for libraries). */
  readonly path: string
  /** Only functions whose name matches. */
  readonly name?: RegExp
  /** The stage, or `undefined`: the frame says nothing, look further up the stack. */
  readonly stage: Stage | undefined
}

const server = (path: string) => `apps/server/src/${path}`
const core = (path: string) => `packages/core/src/${path}`

/** The project's modules by stage; the first rule that matches a frame decides. */
const projectRules: ReadonlyArray<Rule> = [
  // Several stages in one module: by function name first.
  { path: server("handlers/ModelCall.ts"), name: /^requireStandardKey/u, stage: "accept and auth" },
  { path: server("handlers/ModelCall.ts"), name: /^(seedOf|truthy)/u, stage: "decode" },
  { path: server("handlers/ModelCall.ts"), name: /^planReport/u, stage: "plan" },
  { path: server("handlers/Embeddings.ts"), name: /^requestOptions/u, stage: "decode" },
  { path: server("store/money/AccountingLive.ts"), name: /^(settle|record|ledgerRow|once|write)$/u, stage: "settle" },
  // Helpers every stage uses: the caller decides.
  { path: server("pipeline/RandomPool.ts"), stage: undefined },
  { path: server("providers/Fnv1a.ts"), stage: undefined },
  { path: core("catalog/Money.ts"), stage: undefined },
  { path: core("catalog/Cost.ts"), stage: undefined },
  { path: core("errors/"), stage: undefined },
  { path: server("instrumentation/Span.ts"), stage: undefined },
  // accept and auth
  { path: server("http/AuthorizationLive.ts"), stage: "accept and auth" },
  { path: server("http/RateLimit.ts"), stage: "accept and auth" },
  { path: server("http/RequestHost.ts"), stage: "accept and auth" },
  { path: server("http/Policies.ts"), stage: "accept and auth" },
  { path: server("http/NulCharacters.ts"), stage: "accept and auth" },
  { path: server("http/ClientErrors.ts"), stage: "accept and auth" },
  { path: server("auth/"), stage: "accept and auth" },
  { path: server("store/keys/ApiKeyStoreLive.ts"), stage: "accept and auth" },
  { path: core("api/Authorization.ts"), stage: "accept and auth" },
  { path: core("store/ApiKeyStore.ts"), stage: "accept and auth" },
  // decode
  { path: server("http/SchemaErrorsLive.ts"), stage: "decode" },
  { path: core("schema/EmbeddingResponse.ts"), stage: "forward" },
  { path: core("schema/"), stage: "decode" },
  { path: core("api/"), stage: "decode" },
  // plan
  { path: server("catalog/"), stage: "plan" },
  { path: server("pipeline/Route.ts"), stage: "plan" },
  { path: server("embeddings/Answer.ts"), stage: "forward" },
  { path: server("rerank/Answer.ts"), stage: "forward" },
  { path: server("embeddings/Preparation.ts"), stage: "plan" },
  { path: server("pipeline/EndpointHealth.ts"), stage: "plan" },
  { path: server("pipeline/Workspaces.ts"), stage: "plan" },
  { path: server("providers/UpstreamInput.ts"), stage: "plan" },
  { path: server("providers/TokenEstimate.ts"), stage: "plan" },
  { path: server("providers/InputType.ts"), stage: "plan" },
  { path: server("cache/"), stage: "plan" },
  { path: server("store/keys/WorkspaceRepo.ts"), stage: "plan" },
  { path: server("store/credentials/ByokStoreLive.ts"), stage: "plan" },
  { path: core("routing/"), stage: "plan" },
  { path: core("catalog/"), stage: "plan" },
  { path: core("cache/"), stage: "plan" },
  { path: core("providers/"), stage: "plan" },
  // hold
  { path: server("store/money/AccountingLive.ts"), stage: "hold" },
  { path: server("store/money/MoneyFacts.ts"), stage: "hold" },
  { path: server("store/money/LeaseBook.ts"), stage: "hold" },
  { path: server("store/money/InFlight.ts"), stage: "hold" },
  { path: server("store/money/GatewayProcesses.ts"), stage: "hold" },
  { path: server("pipeline/HeldAttempts.ts"), stage: "hold" },
  { path: core("accounting/"), stage: "hold" },
  { path: core("store/Accounting.ts"), stage: "hold" },
  // upstream call
  { path: server("embeddings/UpstreamAttempt.ts"), stage: "upstream call" },
  { path: server("pipeline/AttemptObserver.ts"), stage: "upstream call" },
  { path: server("providers/UpstreamHttp.ts"), stage: "upstream call" },
  { path: server("providers/Adapters.ts"), stage: "upstream call" },
  { path: server("providers/OpenAiCompatible.ts"), stage: "upstream call" },
  { path: server("providers/"), stage: "upstream call" },
  { path: core("upstream/"), stage: "upstream call" },
  // forward
  { path: server("providers/VectorEncoding.ts"), stage: "forward" },
  // settle
  { path: server("embeddings/Settlement.ts"), stage: "settle" },
  // flush share
  { path: server("store/money/LedgerBatch.ts"), stage: "flush share" },
  // the store's client, whichever statement it runs
  { path: server("store/sqlite/SqliteClient.ts"), stage: "store: SQL engine and driver" },
  // the money store's steps (grant, hand back, flush): statements on either store
  { path: server("store/money/SqliteMoneyStore.ts"), stage: "store: SQL engine and driver" },
  { path: server("store/money/PgMoneyStore.ts"), stage: "store: SQL engine and driver" },
  { path: server("store/money/MoneyStore"), stage: "store: SQL engine and driver" },
  { path: server("store/database/Database.ts"), stage: "store: SQL engine and driver" },
  { path: server("store/sql/StoreStatements.ts"), stage: "log and metrics" },
  { path: server("store/sql/StoreChanges.ts"), stage: "store: SQL engine and driver" },
  // log and metrics
  { path: server("observability/"), stage: "log and metrics" },
  { path: server("pipeline/TraceContext.ts"), stage: "log and metrics" },
  { path: server("embeddings/Broadcast.ts"), stage: "log and metrics" },
  // the handler's own steps between the stages
  { path: server("handlers/"), stage: "request handler (glue)" },
  { path: server("embeddings/Embeddings.ts"), stage: "request handler (glue)" },
  { path: server("Server.ts"), stage: "request handler (glue)" },
  { path: server(""), stage: "other" },
  { path: core(""), stage: "other" }
]

/**
 * Library frames that do one thing, looked up by package path (`effect/dist/...`, `node:...`)
 * when no project frame nearer the leaf decided. The first rule matching any frame up the stack
 * (in this order) decides: the HTTP client's frames beat Node's outgoing-message frames it calls.
 */
const libraryRules: ReadonlyArray<Rule> = [
  { path: "@effect/sql-pg", stage: "store: SQL engine and driver" },
  { path: "pg/", stage: "store: SQL engine and driver" },
  { path: "pg-protocol/", stage: "store: SQL engine and driver" },
  { path: "postgres/", stage: "store: SQL engine and driver" },
  { path: "effect/dist/sql/", stage: "store: SQL engine and driver" },
  { path: "effect/dist/http/HttpClient", stage: "upstream call" },
  { path: "effect/dist/http/FetchHttpClient", stage: "upstream call" },
  { path: "@effect/platform-node/dist/NodeHttpClient", stage: "upstream call" },
  { path: "@effect/platform-node/dist/Undici", stage: "upstream call" },
  { path: "undici/", stage: "upstream call" },
  { path: "node:_http_client", stage: "upstream call" },
  { path: "node:internal/deps/undici", stage: "upstream call" },
  { path: "effect/dist/Schema", stage: "decode" },
  { path: "effect/dist/internal/schema/", stage: "decode" },
  { path: "effect/dist/schema/", stage: "decode" },
  { path: "effect/dist/SchemaParser", stage: "decode" },
  { path: "effect/dist/SchemaAST", stage: "decode" },
  { path: "effect/dist/Logger", stage: "log and metrics" },
  { path: "effect/dist/internal/logger", stage: "log and metrics" },
  { path: "effect/dist/Metric", stage: "log and metrics" },
  { path: "effect/dist/internal/metric", stage: "log and metrics" },
  { path: "effect/dist/observability/", stage: "log and metrics" },
  { path: "@effect/platform-node/dist/NodeHttpServer", name: /response|Response|write|end/u, stage: "write" },
  { path: "effect/dist/http/HttpServerResponse", stage: "write" },
  { path: "node:_http_server", name: /write|Write|end|Header|flush/u, stage: "write" },
  { path: "node:_http_server", stage: "accept and auth" },
  { path: "effect/dist/http-api/", stage: "effect http server" },
  { path: "effect/dist/http/", stage: "effect http server" },
  { path: "@effect/platform-node/", stage: "effect http server" },
  { path: "@effect/platform-node-shared/", stage: "effect http server" }
]

const matches = (rule: Rule, location: string, name: string) =>
  location.startsWith(rule.path) && (rule.name === undefined || rule.name.test(name))

/** The row of a sample whose stack had no telling frame, by its innermost frame. */
const fallback = (location: string, name: string): Stage => {
  if (name === "(garbage collector)") return "gc"
  if (name === "(program)") return "v8 (program, compiler)"
  if (location.startsWith("effect/")) return "effect runtime (no project frame)"
  if (location.startsWith("node:") || location === "") return "node http, net and streams"
  return "other"
}

interface Frame {
  readonly location: string
  readonly name: string
  readonly project: boolean
}

const isRunLoop = (frame: Frame) => frame.name === "runLoop" && frame.location.startsWith("effect/dist/internal/effect.js")

/**
 * The stage of a stack, innermost frame first. Only the frames up to the innermost Effect run loop
 * count: the fiber running there does the work, and what lies beyond is whatever resumed it (a
 * ledger batch completing its waiters resumes every request fiber in its own stack, an HTTP
 * server's listener starts one), not the work's purpose.
 */
export const stageOf = (stack: ReadonlyArray<Frame>): Stage => {
  const end = stack.findIndex(isRunLoop)
  const own = end < 0 ? stack : stack.slice(0, end)
  for (const frame of own) {
    if (!frame.project) continue
    const rule = projectRules.find((r) => matches(r, frame.location, frame.name))
    if (rule !== undefined && rule.stage !== undefined) return rule.stage
  }
  for (const rule of libraryRules) {
    if (own.some((frame) => !frame.project && matches(rule, frame.location, frame.name))) return rule.stage!
  }
  const leaf = stack[0]
  return leaf === undefined ? "other" : fallback(leaf.location, leaf.name)
}

interface StageRow {
  readonly stage: Stage
  readonly selfMs: number
  readonly share: number
  /** µs of main-thread CPU per request: the stage's share of the samples × the main thread's CPU per request. */
  readonly usPerRequest: number
  /** The functions with the most self time in the row, for checking the attribution. */
  readonly top: ReadonlyArray<{ readonly name: string; readonly location: string; readonly selfMs: number }>
}

export interface Attribution {
  /** Profiled (wall) time the main thread was not idle in the window. */
  readonly busyMs: number
  readonly requests: number
  /** The main thread's CPU time per request (/proc), µs: what the shares divide. */
  readonly mainThreadUsPerRequest: number
  readonly rows: ReadonlyArray<StageRow>
}

/**
 * Self time of the samples inside `window` (µs on the profile's clock), summed by stage; each
 * stage's share of it times the main thread's CPU µs per request.
 */
export const attribute = (
  profile: CpuProfile,
  repoRoot: string,
  options: {
    readonly requests: number
    readonly mainThreadUsPerRequest: number
    readonly window?: { readonly fromUs: number; readonly toUs: number } | undefined
  }
): Attribution => {
  const { requests, mainThreadUsPerRequest, window } = options
  const byId = new Map<number, ProfileNode>(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const frames = new Map<number, Frame>()
  const frameOf = (node: ProfileNode): Frame => {
    let frame = frames.get(node.id)
    if (frame === undefined) {
      const location = shortPath(node.callFrame.url, repoRoot)
      frame = {
        location,
        name: node.callFrame.functionName,
        project: location.startsWith("apps/") || location.startsWith("packages/")
      }
      frames.set(node.id, frame)
    }
    return frame
  }
  const selfUs = new Map<number, number>()
  let at = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0
    at += delta
    if (window !== undefined && (at < window.fromUs || at > window.toUs)) continue
    const id = profile.samples[i]!
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta)
  }
  const perStage = new Map<Stage, { us: number; functions: Map<string, { name: string; location: string; us: number }> }>()
  let busyUs = 0
  for (const [id, us] of selfUs) {
    const node = byId.get(id)
    if (node === undefined || node.callFrame.functionName === "(idle)" || node.callFrame.functionName === "(root)") continue
    busyUs += us
    const stack: Array<Frame> = []
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at)
      if (n !== undefined) stack.push(frameOf(n))
    }
    const stage = stageOf(stack)
    const entry = perStage.get(stage) ?? { us: 0, functions: new Map() }
    entry.us += us
    const leaf = stack[0]!
    const key = `${leaf.name}|${leaf.location}`
    const fn = entry.functions.get(key) ?? { name: leaf.name === "" ? "(anonymous)" : leaf.name, location: leaf.location, us: 0 }
    fn.us += us
    entry.functions.set(key, fn)
    perStage.set(stage, entry)
  }
  const rows = stages.flatMap((stage): Array<StageRow> => {
    const entry = perStage.get(stage)
    if (entry === undefined) return []
    return [{
      stage,
      selfMs: entry.us / 1000,
      share: busyUs === 0 ? 0 : entry.us / busyUs,
      usPerRequest: busyUs === 0 ? Number.NaN : (entry.us / busyUs) * mainThreadUsPerRequest,
      top: [...entry.functions.values()].sort((a, b) => b.us - a.us).slice(0, 3).map((f) => ({ name: f.name, location: f.location, selfMs: f.us / 1000 }))
    }]
  })
  return { busyMs: busyUs / 1000, requests, mainThreadUsPerRequest, rows }
}
