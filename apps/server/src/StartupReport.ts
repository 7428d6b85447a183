/**
 * What the gateway says once it listens: where it listens, then one line each on the store, the
 * config file, the active providers and their endpoints, the web console, tracing, the embeddings
 * cache and the rate limit. No secret is written: a URL keeps its user, host, port and path, and
 * loses its password and query.
 */
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { HttpServer } from "effect/http"
import * as NodePath from "node:path"
import { CacheConfig, memoryBounds } from "./cache/EmbeddingCache.ts"
import * as CatalogLoader from "./catalog/CatalogLoader.ts"
import * as ConsoleRoute from "./http/ConsoleRoute.ts"
import * as RateLimit from "./http/RateLimit.ts"
import { sqliteFile, StoreConfig, type StoreChoice } from "./store/database/Database.ts"
import * as MemoryBudget from "./http/MemoryBudget.ts"
import * as RedisConnection from "./store/redis/RedisConnection.ts"
import { TracingConfig, tracesUrl } from "./observability/Tracing.ts"

/** A URL as it may be shown: scheme, user, host, port and path; never the password or the query. */
export const shownUrl = (text: string): string => {
  try {
    const url = new URL(text)
    const user = url.username === "" ? "" : `${decodeURIComponent(url.username)}${url.password === "" ? "" : ":***"}@`
    const path = url.pathname === "/" ? "" : url.pathname
    return `${url.protocol}//${user}${url.host}${path}`
  } catch {
    return "(not a valid URL)"
  }
}

// Thousands grouped by hand: `toLocaleString` would load ICU's number formatting data, megabytes
// of the Node binary that would stay resident in a process that never needs them again.
const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/gu, ",")

const count = (n: number, one: string, many = `${one}s`) => `${grouped(n)} ${n === 1 ? one : many}`

const storeLine = (store: StoreChoice) =>
  store.kind === "postgres"
    ? `store: PostgreSQL at ${shownUrl(Redacted.value(store.url!))} (DATABASE_URL)`
    : `store: SQLite (embedded) in ${sqliteFile(store.dataDir)} (SWITCHYARD_DATA_DIR)` +
      (store.synchronous === "normal"
        ? "; commits synced at checkpoints (SWITCHYARD_SQLITE_SYNCHRONOUS=normal): a power cut may lose the last answered requests"
        : "")

const inMemory = (bounds: { readonly maxBytes: number; readonly maxEntries: number | undefined }) =>
  bounds.maxBytes <= 0 || bounds.maxEntries === 0
    ? "none also in memory"
    : `the most recently used also in memory, up to ${grouped(Math.round(bounds.maxBytes / 1024))} KiB` +
      (bounds.maxEntries === undefined ? "" : ` and ${count(bounds.maxEntries, "entry", "entries")}`)

const duration = (seconds: number) =>
  seconds % 86_400 === 0 ? count(seconds / 86_400, "day") : seconds % 3600 === 0 ? count(seconds / 3600, "hour") : count(seconds, "second")

/** The lines after "listening", in order. */
const lines = (options: { readonly origin: string; readonly consoleDir: string }) =>
  Effect.gen(function*() {
    const store = yield* StoreConfig
    const configPath = yield* Config.option(Config.String("SWITCHYARD_CONFIG"))
    const { catalog, active } = yield* CatalogLoader.CurrentCatalog
    const cache = yield* CacheConfig
    const redis = yield* Config.option(Config.Redacted("REDIS_URL"))
    const redisShared = yield* RedisConnection.configured
    const rateLimit = yield* RateLimit.KeyRateLimit
    const tracing = yield* TracingConfig
    const consoleBuilt = yield* ConsoleRoute.isBuilt(options.consoleDir)

    const providers = catalog.providers.filter((p) => active.has(p.slug))
    const endpoints = providers.reduce((n, p) => n + p.endpoints.length, 0)
    const waiting = catalog.providers.filter((p) => p.enabled && !active.has(p.slug) && typeof p.api_key_env === "string")
    const traces = tracesUrl(tracing)
    const out = [
      storeLine(store),
      Option.match(Option.filter(configPath, (p) => p.trim() !== ""), {
        onNone: () => "config: built-in catalog only (SWITCHYARD_CONFIG is unset)",
        onSome: (path) => `config: ${NodePath.resolve(path)} (SWITCHYARD_CONFIG), merged over the built-in catalog`
      }),
      `providers: ${count(providers.length, "active provider")} with ${count(endpoints, "endpoint")}` +
        (waiting.length === 0 ? "" : `; ${count(waiting.length, "more provider")} become active once their key is set (${waiting.map((p) => p.api_key_env).join(", ")})`),
      ...providers.map((p) => `  ${p.slug}: ${p.endpoints.map((e) => `${e.model} (${e.task})`).join(", ")}`),
      consoleBuilt
        ? `console: ${options.origin}/ui/`
        : `console: off, not built in ${NodePath.resolve(options.consoleDir)} (\`npx -y pnpm@10 build\` builds it; SWITCHYARD_CONSOLE_DIR names another place)`,
      tracing.disabled
        ? "tracing: off (OTEL_SDK_DISABLED=true)"
        : Option.match(traces, {
          onNone: () => "tracing: off (OTEL_EXPORTER_OTLP_ENDPOINT is unset)",
          onSome: (url) => `tracing: on, OTLP to ${shownUrl(url)} as service ${tracing.serviceName}`
        }),
      `cache: ${redisShared ? `in Redis at ${shownUrl(Redacted.value(Option.getOrThrow(redis)))} (REDIS_URL)` : "in the store"}, ` +
        `entries live ${duration(cache.ttlSeconds)}, at most ${count(cache.maxEntries, "entry", "entries")}, ` +
        `${inMemory(memoryBounds(cache))} (on for a workspace with \`cache: true\`)`,
      Option.match(rateLimit.policy, {
        onNone: () => "rate limit: off (SWITCHYARD_RATE_LIMIT=off)",
        onSome: (policy) => `rate limit: ${count(policy.requests, "request")} per ${policy.interval} per key, ${redisShared ? "shared in Redis" : "in this process"}`
      }),
      MemoryBudget.describe(yield* MemoryBudget.MemoryBudget)
    ]
    return out
  })

/**
 * Logs where the gateway listens and what it runs with, once the socket is open.
 */
export const layer = (consoleDir: string) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const origin = HttpServer.formatAddress(server.address)
    // Every line is made before the first is written, so the report is one run of lines: a
    // background fiber's line (a probe, a reload) does not land in the middle of it.
    const report = yield* lines({ origin, consoleDir })
    yield* Effect.logInfo(`Switchyard listening on ${origin}/api/v1`)
    for (const line of report) yield* Effect.logInfo(line)
  })).pipe(Layer.provide([CatalogLoader.CurrentCatalog.layer, RateLimit.KeyRateLimit.layer, MemoryBudget.MemoryBudget.layer]))
