import { Api } from "@switchyard/core/api/Api"
import type { HealthChecks } from "@switchyard/core/api/SystemApi"
import { ServiceUnavailable } from "@switchyard/core/schema/ApiError"
import { Cause, Duration, Effect, Fiber, Layer, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Persistence } from "effect/persistence"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs/promises"
import { AuditIntegrity } from "../observability/AuditWatch.ts"
import { ServedRequests } from "../http/ServedRequests.ts"
import { StoreConfig } from "../store/database/Database.ts"
import * as RedisConnection from "../store/redis/RedisConnection.ts"
import { RedisStatus } from "../store/redis/RedisConnection.ts"

// A probe wants an answer within 3 s: a store that neither answers nor fails (a partitioned
// network) within this long is down as far as the probe is concerned, and the 503 leaves with
// room to spare on a busy machine.
const storeTimeout = Duration.millis(2500)

/** Below this many free bytes on the data directory's disk, `/health` says `degraded`. */
const diskFloorBytes = 64 * 1024 * 1024
/**
 * Under this much free space the embedded store's disk is full for the ledger: a small write (the
 * probe's) may still fit in the write-ahead log's allocated pages while a request's flush does
 * not, so readiness goes by the free space too, not by the probe alone.
 */
const diskFullBytes = 1024 * 1024

type Checks = typeof HealthChecks.Type

const unavailable = (why: string, checks: Checks, reason = "store_unavailable") =>
  new ServiceUnavailable({
    message: reason === "shutting_down"
      ? "The gateway is shutting down: it finishes the requests it has taken and takes no more"
      : `The gateway's store ${why}: this process cannot serve requests until it answers again`,
    metadata: { reason, status: "unavailable", checks }
  })

/**
 * `GET /health`: 200 while this process can answer requests and write its ledger; 503 in the
 * error envelope while it cannot (the store's write probe failed or took over 2.5 s) or once it is
 * shutting down (SIGTERM: readiness fails at once, before the requests taken are finished). The
 * body names each dependency's state (`checks`: store, Redis, disk); a Redis outage or a disk
 * under {@link diskFloorBytes} free is `degraded`, still 200: the gateway serves without Redis,
 * and a disk that is low but not full still takes the ledger.
 *
 * The store's check is a write, not a read: the process's own row in Effect's persistence table
 * `effect_persistence_health` (SQL of Effect's library, on every dialect the store may be) is
 * upserted, so a store that answers reads but refuses writes (a full disk, a read-only replica)
 * fails it. It runs in a fiber of its own that the answer never waits for: against a store that
 * accepts and then goes silent, taking a connection from the pool (its connect runs to its own
 * 5 s limit, uninterruptibly) and interrupting a sent query (a grace period, then a cancel request
 * over a new connection, limited to 5 s) would each hold an interrupted probe past its 3 s. The
 * fiber is interrupted when the answer is given and winds down in the layer's scope.
 */
export const SystemHandlers = HttpApiBuilder.group(
  Api,
  "system",
  Effect.fn(function*(handlers) {
    const scope = yield* Effect.scope
    const backing = yield* Persistence.BackingPersistence
    const probes = yield* backing.make("health")
    const self = `process:${Crypto.randomUUID()}`
    const redis = Option.getOrUndefined(yield* Effect.serviceOption(RedisStatus))
    const served = Option.getOrUndefined(yield* Effect.serviceOption(ServedRequests))
    const audit = yield* AuditIntegrity
    const store = yield* StoreConfig
    const dataDir = store.kind === "postgres" ? undefined : store.dataDir

    const write = Effect.flatMap(
      Effect.clockWith((clock) => Effect.succeed(clock.currentTimeMillisUnsafe())),
      (at) => probes.set(self, { at }, Duration.minutes(1))
    ).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.interrupt
          : Effect.logWarning("health: the store failed a write", cause).pipe(Effect.andThen(Effect.fail("is not taking writes")))
      ),
      // A probe every few seconds makes no trace: the request's own span is off for /health
      // (Tracing.ts), and so are the store's spans of its write.
      Effect.withTracerEnabled(false)
    )
    const storeCheck = Effect.forkIn(write, scope).pipe(
      Effect.flatMap((fiber) =>
        Fiber.join(fiber).pipe(
          Effect.timeoutOrElse({
            duration: storeTimeout,
            orElse: () =>
              Effect.logWarning("health: the store did not answer in time").pipe(
                Effect.andThen(Effect.fail(`did not answer within ${Duration.toSeconds(storeTimeout)} s`))
              )
          }),
          Effect.ensuring(Effect.sync(() => fiber.interruptUnsafe()))
        )
      ),
      Effect.as(undefined),
      Effect.catch((why) => Effect.succeed(why))
    )
    const diskCheck: Effect.Effect<Checks["disk"]> = dataDir === undefined
      ? Effect.succeed({ status: "off" })
      : Effect.promise(() =>
        Fs.statfs(dataDir).then(
          (stats): Checks["disk"] => {
            const free = stats.bavail * stats.bsize
            return { status: free < diskFullBytes ? "full" : free < diskFloorBytes ? "low" : "up", free_bytes: free }
          },
          (): Checks["disk"] => ({ status: "down" })
        )
      )

    return handlers.handle("health", () =>
      Effect.gen(function*() {
        const [failure, disk] = yield* Effect.all([storeCheck, diskCheck], { concurrency: 2 })
        const storeFailure = failure ?? (disk.status === "full" ? "has a full disk" : undefined)
        const integrity = audit.current()
        const checks: Checks = {
          store: { status: storeFailure === undefined ? "up" : "down" },
          redis: { status: redis?.state() ?? "off" },
          disk,
          audit: { status: integrity.state, ...(integrity.firstBroken === undefined ? {} : { first_broken: integrity.firstBroken }) }
        }
        if (served?.draining()) return yield* Effect.fail(unavailable("", checks, "shutting_down"))
        if (storeFailure !== undefined) return yield* Effect.fail(unavailable(storeFailure, checks))
        const degraded = checks.redis.status === "down" || disk.status !== "up" && disk.status !== "off" || integrity.state === "broken"
        return { status: degraded ? "degraded" as const : "ok" as const, checks }
      }))
  })
).pipe(
  Layer.provide(Persistence.layerBackingSqlMultiTable),
  // Redis's state, when it is configured: the same connection as the rate limiter's and the cache's.
  Layer.provide(RedisConnection.statusLayer)
)
