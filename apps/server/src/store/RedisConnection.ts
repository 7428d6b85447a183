import { Config, Effect, Layer, Option, Redacted } from "effect"
import type { Redis } from "effect/persistence/Redis"

const redisUrl = Config.option(Config.Redacted("REDIS_URL")).pipe(
  Config.map(Option.filter((url) => Redacted.value(url).length > 0))
)

/**
 * Whether `REDIS_URL` names a Redis server: the rate limits and the embeddings cache live there,
 * shared by every replica, instead of in this process or its store.
 */
export const configured: Effect.Effect<boolean, Config.ConfigError> = Effect.gen(function*() {
  return Option.isSome(yield* redisUrl)
})

/**
 * The one Redis connection of the process, imported only when `REDIS_URL` is set: the client
 * library is several hundred modules (about 10 MB of resident memory at start) that a gateway
 * without Redis never uses.
 */
export const layer: Layer.Layer<Redis, unknown> = Layer.unwrap(Effect.gen(function*() {
  const url = Option.getOrThrow(yield* redisUrl)
  const NodeRedis = yield* Effect.promise(() => import("@effect/platform-node/NodeRedis"))
  return NodeRedis.layer({ url: Redacted.value(url) })
}))
