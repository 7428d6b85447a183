import { Clock, Context, Effect, Layer, Option } from "effect"
import * as Prometheus from "prom-client"
import { RedisStatus } from "../store/RedisConnection.ts"
import * as RedisConnection from "../store/RedisConnection.ts"
import * as OpenHolds from "../store/OpenHolds.ts"
import { StoreStatements } from "../store/StoreStatements.ts"
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
  /** Lines of batches checkpointed, by endpoint and outcome (`served`, or `failed`: an error line). */
  readonly batchLines: (lines: { readonly endpoint: string; readonly served: number; readonly failed: number }) => void
  /** Whether the audit log's chain was found whole at its last check (observability/AuditWatch.ts). */
  readonly auditChain: (ok: boolean) => void
  /** The Prometheus text exposition of every metric, process metrics included. */
  readonly render: Effect.Effect<string>
  readonly contentType: string
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
      const requests = new Prometheus.Counter({
        name: "switchyard_http_requests_total",
        help: "HTTP requests answered, by method, route template and status",
        labelNames: ["method", "route", "status"] as const,
        registers: [registry]
      })
      const duration = new Prometheus.Histogram({
        name: "switchyard_http_request_duration_seconds",
        help: "Time from receiving a request to its response, by method, route template and status",
        labelNames: ["method", "route", "status"] as const,
        buckets: latencyBuckets,
        registers: [registry]
      })
      const attempts = new Prometheus.Counter({
        name: "switchyard_upstream_attempts_total",
        help: "Upstream attempts, by provider and outcome (success, or the failure reason)",
        labelNames: ["provider", "outcome"] as const,
        registers: [registry]
      })
      const attemptDuration = new Prometheus.Histogram({
        name: "switchyard_upstream_attempt_duration_seconds",
        help: "Duration of upstream attempts, by provider and outcome",
        labelNames: ["provider", "outcome"] as const,
        buckets: latencyBuckets,
        registers: [registry]
      })
      const fallbacks = new Prometheus.Counter({
        name: "switchyard_fallbacks_total",
        help: "Moves to the next endpoint of a route after a failed attempt, by model and the provider that failed",
        labelNames: ["model", "provider"] as const,
        registers: [registry]
      })
      const tokens = new Prometheus.Counter({
        name: "switchyard_tokens_total",
        help: "Tokens the serving provider counted for served requests (cached tokens apart), by task (embeddings, rerank), model and provider",
        labelNames: ["task", "model", "provider"] as const,
        registers: [registry]
      })
      const cachedTokens = new Prometheus.Counter({
        name: "switchyard_cached_tokens_total",
        help: "Tokens of served requests answered from the embeddings cache (no upstream call), by model and the provider credited",
        labelNames: ["model", "provider"] as const,
        registers: [registry]
      })
      const cost = new Prometheus.Counter({
        name: "switchyard_cost_usd_total",
        help: "Credits charged for served requests in USD, by task (embeddings, rerank), model, serving provider and whether the workspace's own credential (BYOK) served",
        labelNames: ["task", "model", "provider", "byok"] as const,
        registers: [registry]
      })
      const refusals = new Prometheus.Counter({
        name: "switchyard_rate_limit_refusals_total",
        help: "Requests refused with 429 by a key's own rate limit (SWITCHYARD_RATE_LIMIT), by route template",
        labelNames: ["route"] as const,
        registers: [registry]
      })
      const holds = new Prometheus.Gauge({
        name: "switchyard_holds_open",
        help: "Credit holds open in the store (each gateway process's spend leases, on every replica sharing it), read at each scrape",
        registers: [registry]
      })
      const heldUsd = new Prometheus.Gauge({
        name: "switchyard_holds_open_usd",
        help: "USD held by the open credit holds in the store, read at each scrape",
        registers: [registry]
      })

      const cacheHits = new Prometheus.Counter({
        name: "switchyard_embedding_cache_hits_total",
        help: "Embedding input items served from the embeddings cache, by model",
        labelNames: ["model"] as const,
        registers: [registry]
      })
      const cacheMisses = new Prometheus.Counter({
        name: "switchyard_embedding_cache_misses_total",
        help: "Embedding input items looked up in the embeddings cache and not found (sent upstream), by model",
        labelNames: ["model"] as const,
        registers: [registry]
      })
      const cacheBytes = new Prometheus.Counter({
        name: "switchyard_embedding_cache_bytes_total",
        help: "Bytes of vectors served from (direction=\"read\") and stored in (direction=\"write\") the embeddings cache",
        labelNames: ["direction"] as const,
        registers: [registry]
      })
      const batchLines = new Prometheus.Counter({
        name: "switchyard_batch_lines_total",
        help: "Lines of batches run and checkpointed, by endpoint and outcome (served, or failed: an error line)",
        labelNames: ["endpoint", "outcome"] as const,
        registers: [registry]
      })
      // Both series exist from the start, so a rate over them is 0 rather than absent.
      cacheBytes.inc({ direction: "read" }, 0)
      cacheBytes.inc({ direction: "write" }, 0)

      // 1 while the audit log's chain was whole at its last check, 0 from a break on; absent before the first.
      const auditChainOk = new Prometheus.Gauge({
        name: "switchyard_audit_chain_ok",
        help: "Whether the audit log's hash chain was whole at this process's last check (1) or broken (0)",
        registers: [registry]
      })
      // 1 while a configured dependency answers, 0 during its outage (Redis: RedisConnection.ts).
      const redis = Option.getOrUndefined(yield* Effect.serviceOption(RedisStatus))
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

      const readHolds = Effect.flatMap(Clock.currentTimeMillis, openHolds).pipe(
        Effect.tap((open) =>
          Effect.sync(() => {
            holds.set(open.count)
            heldUsd.set(Number(open.nanos) / 1e9)
          })
        ),
        Effect.catchCause((cause) => Effect.logWarning("metrics: could not read the open holds", cause))
      )

      return GatewayMetrics.of({
        contentType: registry.contentType,
        auditChain: (ok) => auditChainOk.set(ok ? 1 : 0),
        cacheRead: ({ bytes, hits, misses, model }) => {
          cacheHits.inc({ model }, hits)
          cacheMisses.inc({ model }, misses)
          cacheBytes.inc({ direction: "read" }, bytes)
        },
        cacheWrite: (bytes) => cacheBytes.inc({ direction: "write" }, bytes),
        batchLines: ({ endpoint, served, failed }) => {
          batchLines.inc({ endpoint, outcome: "served" }, served)
          batchLines.inc({ endpoint, outcome: "failed" }, failed)
        },
        record: ({ facts, method, route, seconds, status }) => {
          const labels = { method, route, status: String(status) }
          requests.inc(labels)
          duration.observe(labels, seconds)
          if (facts.rate_limited === true) refusals.inc({ route })
          const tried = facts.attempts
          if (tried !== undefined) {
            for (const [i, attempt] of tried.entries()) {
              const outcome = attempt.outcome === "failure" ? snakeCase(attempt.reason ?? "failure") : attempt.outcome
              attempts.inc({ provider: attempt.provider, outcome })
              if (attempt.latency_ms !== undefined) {
                attemptDuration.observe({ provider: attempt.provider, outcome }, attempt.latency_ms / 1000)
              }
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
            if (facts.cost !== undefined) {
              cost.inc({ task, model: facts.model, provider: facts.provider, byok: String(facts.byok === true) }, facts.cost)
            }
          }
        },
        render: readHolds.pipe(
          Effect.andThen(store.render),
          Effect.flatMap((storeMetrics) =>
            Effect.promise(async () => `${await registry.metrics()}\n${storeMetrics}\n${await process.metrics()}`)
          )
        )
      })
    })
  ).pipe(Layer.provide(RedisConnection.statusLayer))
}
