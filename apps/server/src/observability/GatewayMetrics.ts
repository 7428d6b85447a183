import { Clock, Context, Effect, Layer, Option } from "effect"
import * as Prometheus from "prom-client"
import { MemoryBudget } from "../http/MemoryBudget.ts"
import { RedisStatus } from "../store/redis/RedisConnection.ts"
import * as RedisConnection from "../store/redis/RedisConnection.ts"
import * as OpenHolds from "../store/money/OpenHolds.ts"
import { StoreStatements } from "../store/sql/StoreStatements.ts"
import type { RequestFacts } from "../instrumentation/RequestFacts.ts"

/**
 * The gateway's Prometheus metrics (prom-client). Names and labels are part of the operator's
 * surface (dashboards and alerts query them); docs/decisions.md lists them.
 */
export interface GatewayMetricsShape {
  /** Counts one finished request with what its parts noted about it. */
  readonly record: (request: {
    readonly method: string
    readonly route: string
    readonly status: number
    readonly seconds: number
    readonly facts: RequestFacts
  }) => void
  /**
   * Counts one read of the embeddings cache for a model's request: the items found (`hits`), the
   * items not found, which go upstream (`misses`), and the bytes of the vectors served.
   */
  readonly cacheRead: (read: { readonly model: string; readonly hits: number; readonly misses: number; readonly bytes: number }) => void
  /** Counts the bytes of vectors the embeddings cache stored. */
  readonly cacheWrite: (bytes: number) => void
  /**
   * Lines of batches checkpointed, by endpoint, outcome (`served`, or `failed`: an error line),
   * mode (`provider_batch`: in a job at the provider's batch API; `live`) and provider (the one
   * that served it or ran its job; empty for a live line that failed).
   */
  readonly batchLines: (endpoint: string, lines: ReadonlyArray<BatchLineFacts>) => void
  /** Whether the audit log's chain was found whole at its last check (observability/AuditWatch.ts). */
  readonly auditChain: (ok: boolean) => void
  /** The Prometheus text exposition of every metric, process metrics included. */
  readonly render: Effect.Effect<string>
  readonly contentType: string
}

/** What the batch-lines counter reads of a line written. */
interface BatchLineFacts {
  readonly served: boolean
  readonly mode?: "provider_batch" | "live" | undefined
  readonly provider?: string | undefined
}

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

// Process metrics (CPU, memory, heap, event-loop lag, GC) describe the process, not one server:
// they are collected once per process, whatever number of servers a test process starts.
let processRegistry: Prometheus.Registry | undefined
const processMetrics = () => {
  if (processRegistry === undefined) {
    processRegistry = new Prometheus.Registry()
    Prometheus.collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/** `RateLimited` → `rate_limited`: label values in the exposition's usual spelling. */
const snakeCase = (tag: string) => tag.replace(/([a-z0-9])([A-Z])/gu, "$1_$2").toLowerCase()

const counter = <L extends string>(registry: Prometheus.Registry, name: string, help: string, labelNames: ReadonlyArray<L>) =>
  new Prometheus.Counter<L>({ name, help, labelNames, registers: [registry] })

const histogram = <L extends string>(registry: Prometheus.Registry, name: string, help: string, labelNames: ReadonlyArray<L>) =>
  new Prometheus.Histogram<L>({ name, help, labelNames, buckets: latencyBuckets, registers: [registry] })

/** The requests' own metrics, from what their parts noted: counts, durations, upstream attempts, tokens and cost. */
const requestMetrics = (registry: Prometheus.Registry): GatewayMetricsShape["record"] => {
  const labels = ["method", "route", "status"] as const
  const requests = counter(registry, "switchyard_http_requests_total", "HTTP requests answered, by method, route template and status", labels)
  const duration = histogram(registry, "switchyard_http_request_duration_seconds", "Time from receiving a request to its response, by method, route template and status", labels)
  const attempts = counter(registry, "switchyard_upstream_attempts_total", "Upstream attempts, by provider and outcome (success, or the failure reason)", ["provider", "outcome"])
  const attemptDuration = histogram(registry, "switchyard_upstream_attempt_duration_seconds", "Duration of upstream attempts, by provider and outcome", ["provider", "outcome"])
  const fallbacks = counter(registry, "switchyard_fallbacks_total", "Moves to the next endpoint of a route after a failed attempt, by model and the provider that failed", ["model", "provider"])
  const tokens = counter(registry, "switchyard_tokens_total", "Tokens the serving provider counted for served requests (cached tokens apart), by task (embeddings, rerank), model and provider", ["task", "model", "provider"])
  const cachedTokens = counter(registry, "switchyard_cached_tokens_total", "Tokens of served requests answered from the embeddings cache (no upstream call), by model and the provider credited", ["model", "provider"])
  const cost = counter(registry, "switchyard_cost_usd_total", "Credits charged for served requests in USD, by task (embeddings, rerank), model, serving provider and whether the workspace's own credential (BYOK) served", ["task", "model", "provider", "byok"])
  const refusals = counter(registry, "switchyard_rate_limit_refusals_total", "Requests refused with 429 by a key's own rate limit (SWITCHYARD_RATE_LIMIT), by route template", ["route"])
  return ({ facts, method, route, seconds, status }) => {
    const labels = { method, route, status: String(status) }
    requests.inc(labels)
    duration.observe(labels, seconds)
    if (facts.rate_limited === true) refusals.inc({ route })
    const tried = facts.attempts
    if (tried !== undefined) {
      for (const [i, attempt] of tried.entries()) {
        const outcome = attempt.outcome === "failure" ? snakeCase(attempt.reason ?? "failure") : attempt.outcome
        attempts.inc({ provider: attempt.provider, outcome })
        if (attempt.latency_ms !== undefined) attemptDuration.observe({ provider: attempt.provider, outcome }, attempt.latency_ms / 1000)
        if (attempt.outcome !== "success" && i < tried.length - 1 && facts.model !== undefined) {
          fallbacks.inc({ model: facts.model, provider: attempt.provider })
        }
      }
    }
    if (facts.generation_id !== undefined && facts.model !== undefined && facts.provider !== undefined) {
      const task = facts.task ?? "embeddings"
      const cached = facts.cached_tokens ?? 0
      if (facts.tokens !== undefined) tokens.inc({ task, model: facts.model, provider: facts.provider }, facts.tokens - cached)
      if (cached > 0) cachedTokens.inc({ model: facts.model, provider: facts.provider }, cached)
      if (facts.cost !== undefined) cost.inc({ task, model: facts.model, provider: facts.provider, byok: String(facts.byok === true) }, facts.cost)
    }
  }
}

/** The embeddings cache's reads and writes. */
const cacheMetrics = (registry: Prometheus.Registry): Pick<GatewayMetricsShape, "cacheRead" | "cacheWrite"> => {
  const hits = counter(registry, "switchyard_embedding_cache_hits_total", "Embedding input items served from the embeddings cache, by model", ["model"])
  const misses = counter(registry, "switchyard_embedding_cache_misses_total", "Embedding input items looked up in the embeddings cache and not found (sent upstream), by model", ["model"])
  const bytes = counter(registry, "switchyard_embedding_cache_bytes_total", "Bytes of vectors served from (direction=\"read\") and stored in (direction=\"write\") the embeddings cache", ["direction"])
  // Both series exist from the start, so a rate over them is 0 rather than absent.
  bytes.inc({ direction: "read" }, 0)
  bytes.inc({ direction: "write" }, 0)
  return {
    cacheRead: (read) => {
      hits.inc({ model: read.model }, read.hits)
      misses.inc({ model: read.model }, read.misses)
      bytes.inc({ direction: "read" }, read.bytes)
    },
    cacheWrite: (written) => bytes.inc({ direction: "write" }, written)
  }
}

/** The store's open holds, read at each scrape (with replicas, each reads the same shared figure). */
const holdMetrics = (registry: Prometheus.Registry, openHolds: Effect.Success<typeof OpenHolds.make>) => {
  const holds = new Prometheus.Gauge({
    name: "switchyard_holds_open",
    help: "Credit holds open in the store (each gateway process's spend leases, on every replica sharing it), read at each scrape",
    registers: [registry]
  })
  const heldUsd = new Prometheus.Gauge({ name: "switchyard_holds_open_usd", help: "USD held by the open credit holds in the store, read at each scrape", registers: [registry] })
  return Effect.flatMap(Clock.currentTimeMillis, openHolds).pipe(
    Effect.tap((open) =>
      Effect.sync(() => {
        holds.set(open.count)
        heldUsd.set(Number(open.nanos) / 1e9)
      })
    ),
    Effect.catchCause((cause) => Effect.logWarning("metrics: could not read the open holds", cause))
  )
}

/** 1 while a configured dependency answers, 0 during its outage (Redis: RedisConnection.ts); absent when not configured. */
const dependencyMetric = (registry: Prometheus.Registry, redis: RedisStatus["Service"] | undefined) =>
  new Prometheus.Gauge({
    name: "switchyard_dependency_up",
    help: "Whether an optional dependency answers (1) or is in an outage (0), by dependency; absent when not configured",
    labelNames: ["dependency"] as const,
    registers: [registry],
    collect() {
      const state = redis?.state() ?? "off"
      if (state !== "off") this.set({ dependency: "redis" }, state === "up" ? 1 : 0)
    }
  })

/** The request memory budget (http/MemoryBudget.ts): what it allows, and what the requests in flight hold of it. */
const memoryMetrics = (registry: Prometheus.Registry, budget: MemoryBudget["Service"]) => {
  new Prometheus.Gauge({
    name: "switchyard_memory_budget_bytes",
    help: "Bytes the requests in flight may hold at once (their bodies and expected answers): SWITCHYARD_MEMORY_BUDGET_MB or a share of the memory limit",
    registers: [registry],
    collect() {
      this.set(budget.budgetBytes)
    }
  })
  new Prometheus.Gauge({
    name: "switchyard_memory_held_bytes",
    help: `Bytes the requests in flight hold of the memory budget now, by workspace (the ${heldWorkspaces} holding most by id, ` +
      `the rest summed as "other"; sum them for the total); a request that does not fit beside them is answered 503 with Retry-After`,
    labelNames: ["workspace"] as const,
    registers: [registry],
    collect() {
      this.reset()
      const held = [...budget.heldByWorkspace()].sort((a, b) => b[1] - a[1])
      for (const [workspace, bytes] of held.slice(0, heldWorkspaces)) this.set({ workspace }, bytes)
      this.set({ workspace: "other" }, held.slice(heldWorkspaces).reduce((n, [, bytes]) => n + bytes, 0))
    }
  })
}

/** The workspaces `switchyard_memory_held_bytes` names one by one: the cardinality stays bounded. */
const heldWorkspaces = 10

export class GatewayMetrics extends Context.Service<GatewayMetrics, GatewayMetricsShape>()(
  "@switchyard/server/observability/GatewayMetrics"
) {
  static readonly layer = Layer.effect(
    GatewayMetrics,
    Effect.gen(function*() {
      const openHolds = yield* OpenHolds.make
      const store = yield* StoreStatements
      const registry = new Prometheus.Registry()
      const process = processMetrics()
      const requests = requestMetrics(registry)
      const cache = cacheMetrics(registry)
      const readHolds = holdMetrics(registry, openHolds)
      const batchLines = counter(
        registry,
        "switchyard_batch_lines_total",
        "Lines of batches run and checkpointed, by endpoint, outcome (served, or failed: an error line), mode (provider_batch or live) and provider",
        ["endpoint", "outcome", "mode", "provider"]
      )
      // 1 while the audit log's chain was whole at its last check, 0 from a break on; absent before the first.
      const auditChainOk = new Prometheus.Gauge({
        name: "switchyard_audit_chain_ok",
        help: "Whether the audit log's hash chain was whole at this process's last check (1) or broken (0)",
        registers: [registry]
      })
      dependencyMetric(registry, Option.getOrUndefined(yield* Effect.serviceOption(RedisStatus)))
      memoryMetrics(registry, yield* MemoryBudget)
      return GatewayMetrics.of({
        contentType: registry.contentType,
        auditChain: (ok) => auditChainOk.set(ok ? 1 : 0),
        ...cache,
        batchLines: (endpoint, lines) => {
          const counts = new Map<string, { labels: Record<string, string>; n: number }>()
          for (const line of lines) {
            const labels = { endpoint, outcome: line.served ? "served" : "failed", mode: line.mode ?? "live", provider: line.provider ?? "" }
            const key = `${labels.outcome}|${labels.mode}|${labels.provider}`
            const count = counts.get(key) ?? { labels, n: 0 }
            count.n += 1
            counts.set(key, count)
          }
          for (const { labels, n } of counts.values()) batchLines.inc(labels, n)
        },
        record: requests,
        render: readHolds.pipe(
          Effect.andThen(store.render),
          Effect.flatMap((storeMetrics) =>
            Effect.promise(async () => `${await registry.metrics()}\n${storeMetrics}\n${await process.metrics()}`)
          )
        )
      })
    })
  ).pipe(
    Layer.provide(RedisConnection.statusLayer),
    // The budget the request policies charge (one layer, built once).
    Layer.provide(MemoryBudget.layer)
  )
}
