import { Config, Context, Duration, Effect, Layer, Option, Redacted, Schedule, Stream } from "effect"
import { CircuitBreaker } from "effect/persistence"
import * as Redis from "effect/persistence/Redis"
import { RedisError } from "effect/persistence/Redis"

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

/** `off` without `REDIS_URL`; `up` while Redis answers; `down` during an outage. */
export type RedisState = "off" | "up" | "down"

/**
 * What this process knows of its Redis, for `/health` and `/metrics`: its users (the rate limiter,
 * the embeddings cache) fall back on their own while it is `down`.
 */
export class RedisStatus extends Context.Service<RedisStatus, {
  readonly state: () => RedisState
}>()("@switchyard/server/store/RedisStatus") {
  static readonly off = Layer.succeed(RedisStatus, RedisStatus.of({ state: () => "off" }))
}

/**
 * How long one Redis command may take before it counts as failed (its caller then goes on without
 * Redis). Redis answers in well under a millisecond on a healthy network, but the bound is read
 * on this process's event loop: under a burst the answer can sit unread behind other work, and a
 * bound of 100 ms then failed healthy commands (200 requests at once on two replicas: 122 passed an
 * allowance of 50). A lost connection fails at once (no offline queue); only a Redis that is
 * connected and silent costs this bound, and only until the circuit opens.
 */
const commandTimeout = Duration.millis(250)

/** How long the circuit stays open (every call failing at once) before one call probes Redis again. */
const openDuration = Duration.seconds(1)

/** Failures in a row that open the circuit: one slow answer under load is not an outage. */
const failuresToOpen = 3

/** How long a TCP connection to Redis may take to open. */
const connectTimeout = Duration.seconds(1)

/**
 * Background pings in a row without an answer after which the connection is replaced by a new
 * one. A connection black-holed by a partition (no reset ever arrives) or stuck in its handshake
 * would otherwise never be given up: node-redis only reconnects after the socket closes, and a
 * silent socket can stay open for the kernel's whole retransmission time (about 15 minutes).
 */
const pingsBeforeReplacing = 5

// Reconnecting after a lost connection: 50 ms doubling up to 1 s, with jitter. It never gives up:
// Redis coming back is the common end of an outage.
const reconnectDelay = (retries: number) => Math.min(2 ** retries * 50, 1000) + Math.floor(Math.random() * 100)

/** A command's failure while Redis is known to be down: the caller falls back without a log line. */
class RedisUnavailable extends Error {
  constructor() {
    super("Redis is unavailable")
    this.name = "RedisUnavailable"
  }
}

/**
 * A `Redis` service over `send` in which every command is bounded ({@link commandTimeout}) and runs
 * through one circuit breaker: after {@link failuresToOpen} failures in a row every command fails
 * at once (a {@link RedisUnavailable}) for {@link openDuration}, then one command probes. The
 * outage is one warning line when the circuit opens and one line when a probe closes it; a
 * background ping each second finds an outage, and Redis's return, without traffic. After
 * {@link pingsBeforeReplacing} failed pings in a row, `replace` gives the connection up for a new one.
 */
const guarded = (send: (args: ReadonlyArray<string>) => Promise<unknown>, replace: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const breaker = yield* CircuitBreaker.make({
      tripPolicy: CircuitBreaker.consecutive(failuresToOpen),
      openDuration
    }).pipe(Effect.provide(CircuitBreaker.layerStoreMemory()))
    let state: RedisState = "up"
    yield* breaker.transitions.pipe(
      Stream.runForEach((transition) =>
        Effect.suspend(() => {
          if (transition.to === "Open" && state === "up") {
            state = "down"
            return Effect.logWarning(
              "Redis is unavailable: rate limits fall back to this process's own limiter and the embeddings cache reads as a miss until it answers again"
            )
          }
          if (transition.to === "Closed" && state === "down") {
            state = "up"
            return Effect.logInfo("Redis answers again: rate limits and the embeddings cache are shared through it once more")
          }
          return Effect.void
        })
      ),
      Effect.forkScoped
    )
    const sendGuarded = <A = unknown>(command: string, ...args: ReadonlyArray<string>): Effect.Effect<A, RedisError> =>
      Effect.tryPromise({
        try: () => send([command, ...args]) as Promise<A>,
        catch: (cause) => new RedisError({ cause })
      }).pipe(
        Effect.timeoutOrElse({
          duration: commandTimeout,
          orElse: () =>
            Effect.fail(new RedisError({ cause: new Error(`Redis did not answer ${command} within ${Duration.toMillis(commandTimeout)} ms`) }))
        }),
        breaker.execute({ key: "redis" }),
        Effect.catchTag("CircuitBreakerError", () => Effect.fail(new RedisError({ cause: new RedisUnavailable() })))
      )
    // A ping each open period: an outage is found (and, once the circuit is open, Redis's return)
    // without waiting for traffic; a connection that stays silent is replaced.
    let failedPings = 0
    yield* Effect.exit(sendGuarded("PING")).pipe(
      Effect.flatMap((exit) => {
        if (exit._tag === "Success") {
          failedPings = 0
          return Effect.void
        }
        if (++failedPings < pingsBeforeReplacing) return Effect.void
        failedPings = 0
        return replace
      }),
      Effect.repeat(Schedule.spaced(openDuration)),
      Effect.forkScoped
    )
    const unused = Effect.fail(new RedisError({ cause: new Error("reserved Redis connections are not used by the gateway") }))
    const redis = yield* Redis.make({
      send: sendGuarded,
      subscribe: () => unused,
      connect: unused
    })
    return { redis, status: RedisStatus.of({ state: () => state }) }
  })

/**
 * The one Redis connection of the process, imported only when `REDIS_URL` is set: the client
 * library is several hundred modules (about 10 MB of resident memory at start) that a gateway
 * without Redis never uses.
 *
 * Redis is optional at run time: the layer never waits for it (the connection is made in the
 * background and remade after a loss, for ever; one that stays silent is replaced), commands are refused at once while it is not
 * connected (no offline queue: node-redis would otherwise hold them until it reconnects), and
 * every command is bounded ({@link guarded}).
 */
export const layer: Layer.Layer<Redis.Redis | RedisStatus, Config.ConfigError> = Layer.effectContext(Effect.gen(function*() {
  const url = Option.getOrThrow(yield* redisUrl)
  const { createClient } = yield* Effect.promise(() => import("redis"))
  const connect = () => {
    const client = createClient({
      url: Redacted.value(url),
      disableOfflineQueue: true,
      socket: {
        connectTimeout: Duration.toMillis(connectTimeout),
        reconnectStrategy: reconnectDelay
      }
    })
    // node-redis emits `error` for every failed (re)connect; the outage is logged once, by the
    // circuit, instead.
    client.on("error", () => {})
    const connected = client.connect()
    connected.catch(() => {})
    return { client, connected }
  }
  const close = (client: ReturnType<typeof connect>["client"]) => {
    if (client.isOpen) client.destroy()
  }
  let current = connect()
  yield* Effect.addFinalizer(() => Effect.sync(() => close(current.client)))
  // The start waits for the connection at most `connectTimeout`: with Redis up, the first
  // requests find it connected; with Redis down or silent, the gateway starts without it.
  yield* Effect.tryPromise(() => current.connected).pipe(Effect.ignore, Effect.timeoutOption(connectTimeout))
  const replace = Effect.suspend(() => {
    close(current.client)
    current = connect()
    return Effect.logDebug("Redis connection replaced after pings without an answer")
  })
  const { redis, status } = yield* guarded((args) => current.client.sendCommand([...args]), replace)
  return Context.make(Redis.Redis, redis).pipe(Context.add(RedisStatus, status))
}))

/** {@link RedisStatus} of the process: the connection's when `REDIS_URL` is set, `off` otherwise. */
export const statusLayer: Layer.Layer<RedisStatus, Config.ConfigError> = Layer.unwrap(Effect.gen(function*() {
  return (yield* configured) ? layer : RedisStatus.off
}))
