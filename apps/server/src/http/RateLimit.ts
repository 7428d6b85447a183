import { TooManyRequests } from "@switchyard/core/schema/ApiError"
import { Clock, Config, Context, Data, Duration, Effect, Layer, Option } from "effect"
import { HttpEffect, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { RateLimiter } from "effect/persistence"
import * as RedisConnection from "../store/redis/RedisConnection.ts"

/**
 * How many requests a key may make per interval (`SWITCHYARD_RATE_LIMIT`, default `600/60s`;
 * `off` disables it).
 */
export interface RatePolicy {
  readonly requests: number
  readonly intervalMillis: number
  readonly interval: string
}

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

export const parsePolicy = (text: string): Option.Option<RatePolicy> | undefined => {
  const trimmed = text.trim().toLowerCase()
  if (trimmed === "off" || trimmed === "none" || trimmed === "0") return Option.none()
  const match = /^([1-9][0-9]{0,8})\s*\/\s*([1-9][0-9]{0,8})?\s*(ms|s|m|h)$/u.exec(trimmed)
  if (match === null) return undefined
  const requests = Number(match[1])
  const count = match[2] === undefined ? 1 : Number(match[2])
  const intervalMillis = count * units[match[3]!]!
  return Option.some({ requests, intervalMillis, interval: `${count}${match[3]}` })
}

class RateLimitConfigInvalid extends Data.TaggedError("RateLimitConfigInvalid")<{ readonly message: string }> {}

const RateLimitConfig = Config.String("SWITCHYARD_RATE_LIMIT").pipe(Config.withDefault("600/60s"))

/**
 * Where the key stands after a request was counted.
 */
interface RateState {
  readonly limit: number
  readonly remaining: number
  readonly resetAtMillis: number
}

const headersOf = (state: RateState) => ({
  "x-ratelimit-limit": String(state.limit),
  "x-ratelimit-remaining": String(state.remaining),
  "x-ratelimit-reset": String(state.resetAtMillis)
})

export class KeyRateLimit extends Context.Service<KeyRateLimit, {
  readonly policy: Option.Option<RatePolicy>
  /**
   * Counts one request of the key; fails with 429 when its allowance is spent. The response,
   * whatever it is, carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`
   * (epoch milliseconds at which the full allowance is back), and a 429 also `Retry-After`.
   */
  readonly check: (keyHash: string) => Effect.Effect<void, TooManyRequests, HttpServerRequest.HttpServerRequest>
}>()("@switchyard/server/http/KeyRateLimit") {
  /**
   * The per-key request limit: in process by default; in Redis (shared by every replica) when
   * `REDIS_URL` is set, with this process's own limiter while Redis is down. Both use a token
   * bucket refilled continuously (`requests / interval`), atomically (one Lua script in Redis).
   */
  static readonly layer = Layer.unwrap(Effect.gen(function*() {
    const text = yield* RateLimitConfig
    const policy = parsePolicy(text)
    if (policy === undefined) {
      return yield* new RateLimitConfigInvalid({
        message: `SWITCHYARD_RATE_LIMIT must look like "600/60s" (requests/interval in ms, s, m or h) or "off"; got ${JSON.stringify(text)}`
      })
    }
    if (Option.isNone(policy)) return Layer.succeed(KeyRateLimit, KeyRateLimit.of({ policy, check: () => Effect.void }))
    const rate = policy.value
    const local = RateLimiter.make.pipe(Effect.provide(RateLimiter.layerStoreMemory))
    if (!(yield* RedisConnection.configured)) {
      return Layer.effect(KeyRateLimit, Effect.flatMap(local, (limiter) => make(rate, { shared: limiter, local: limiter, sharedUp: () => true })))
    }
    return Layer.effect(
      KeyRateLimit,
      Effect.gen(function*() {
        const status = yield* RedisConnection.RedisStatus
        const shared = yield* RateLimiter.make.pipe(Effect.provide(RateLimiter.layerStoreRedis({ prefix: "switchyard:ratelimit:" })))
        return yield* make(rate, { shared, local: yield* local, sharedUp: () => status.state() !== "down" })
      })
    ).pipe(Layer.provide(RedisConnection.layer))
  }))
}

/**
 * Where the buckets live: `shared` (Redis, every replica) while `sharedUp()`, and this process's
 * own `local` limiter while the shared one is down or fails (its failure is bounded and logged
 * once per outage by the Redis connection): a key keeps its limit, counted per replica, and no
 * request waits for Redis.
 */
interface Limiters {
  readonly shared: RateLimiter.RateLimiter
  readonly local: RateLimiter.RateLimiter
  readonly sharedUp: () => boolean
}

const make = (rate: RatePolicy, limiters: Limiters) =>
  Effect.gen(function*() {
    const { local, shared, sharedUp } = limiters
    const policy = Option.some(rate)
    const { requests, intervalMillis } = rate
    const refillMillis = intervalMillis / requests
    const setHeaders = (headers: Record<string, string>) =>
      HttpEffect.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))
    return KeyRateLimit.of({
      policy,
      check: (keyHash) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const options = {
            algorithm: "token-bucket",
            onExceeded: "fail",
            window: Duration.millis(intervalMillis),
            limit: requests,
            key: keyHash
          } as const
          let consumed = yield* (sharedUp() ? shared : local).consume(options).pipe(Effect.result)
          if (consumed._tag === "Failure" && consumed.failure.reason._tag === "RateLimitStoreError") {
            consumed = yield* local.consume(options).pipe(Effect.result)
          }
          if (consumed._tag === "Success") {
            const result = consumed.success
            return yield* setHeaders(headersOf({
              limit: requests,
              remaining: Math.max(0, Math.floor(result.remaining)),
              resetAtMillis: now + Math.ceil(Duration.toMillis(result.resetAfter))
            }))
          }
          const reason = consumed.failure.reason
          // This process's own limiter keeps its buckets in memory: it does not fail.
          if (reason._tag === "RateLimitStoreError") return yield* Effect.die(reason)
          const retryMillis = Math.max(1, Math.ceil(Duration.toMillis(reason.retryAfter)))
          const retrySeconds = Math.max(1, Math.ceil(retryMillis / 1000))
          yield* setHeaders({
            ...headersOf({ limit: requests, remaining: 0, resetAtMillis: now + retryMillis + Math.ceil((requests - 1) * refillMillis) }),
            "retry-after": String(retrySeconds)
          })
          return yield* new TooManyRequests({
            message: `Rate limit exceeded: this key may make ${requests} requests per ${rate.interval}. Retry after ${retrySeconds} s.`,
            metadata: { limit: requests, interval: rate.interval, retry_after_ms: retryMillis }
          })
        })
    })
  })
