import { Api } from "@switchyard/core/api/Api"
import { ServiceUnavailable } from "@switchyard/core/errors/ApiError"
import { Cause, Duration, Effect, Fiber } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SqlClient } from "effect/sql"

// A probe wants an answer within 3 s: a store that neither answers nor fails (a partitioned
// network) within this long is down as far as the probe is concerned, and the 503 leaves with
// room to spare on a busy machine.
const storeTimeout = Duration.millis(2500)

const unavailable = (why: string) =>
  new ServiceUnavailable({
    message: `The gateway's store ${why}: this process cannot serve requests until it answers again`,
    metadata: { reason: "store_unavailable" }
  })

/**
 * `GET /health`: 200 while the store answers a query; 503 in the error envelope, with the cause
 * in the log, when it fails (PostgreSQL unreachable, SQLite closed) or does not answer in time.
 *
 * The query runs in a fiber of its own that the answer never waits for: against a store that
 * accepts and then goes silent, taking a connection from the pool (its connect runs to its own
 * 5 s limit, uninterruptibly) and interrupting a sent query (a grace period, then a cancel request
 * over a new connection, limited to 5 s) would each hold an interrupted probe past its 3 s. The
 * fiber is interrupted when the answer is given and winds down in the layer's scope.
 */
export const SystemHandlers = HttpApiBuilder.group(
  Api,
  "system",
  Effect.fn(function*(handlers) {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    const probe = sql`SELECT 1`.pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.interrupt
          : Effect.logWarning("health: the store failed", cause).pipe(Effect.andThen(Effect.fail(unavailable("is not answering"))))
      )
    )
    return handlers.handle("health", () =>
      Effect.forkIn(probe, scope).pipe(
        Effect.flatMap((fiber) =>
          Fiber.join(fiber).pipe(
            Effect.timeoutOrElse({
              duration: storeTimeout,
              orElse: () =>
                Effect.logWarning("health: the store did not answer in time").pipe(
                  Effect.andThen(Effect.fail(unavailable(`did not answer within ${Duration.toSeconds(storeTimeout)} s`)))
                )
            }),
            Effect.ensuring(Effect.sync(() => fiber.interruptUnsafe()))
          )
        ),
        Effect.as({ status: "ok" as const })
      ))
  })
)
