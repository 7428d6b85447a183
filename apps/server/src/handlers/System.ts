import { Api } from "@switchyard/core/api/Api"
import { ServiceUnavailable } from "@switchyard/core/errors/ApiError"
import { Cause, Duration, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SqlClient } from "effect/sql"

// A probe wants an answer: a store that neither answers nor fails (a partitioned network) within
// this long is down as far as the probe is concerned.
const storeTimeout = Duration.seconds(3)

const unavailable = (why: string) =>
  new ServiceUnavailable({
    message: `The gateway's store ${why}: this process cannot serve requests until it answers again`,
    metadata: { reason: "store_unavailable" }
  })

/**
 * `GET /health`: 200 while the store answers a query; 503 in the error envelope, with the cause
 * in the log, when it fails (PostgreSQL unreachable, PGlite closed) or does not answer in time.
 */
export const SystemHandlers = HttpApiBuilder.group(
  Api,
  "system",
  Effect.fn(function*(handlers) {
    const sql = yield* SqlClient.SqlClient
    return handlers.handle("health", () =>
      sql`SELECT 1`.pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.interrupt
            : Effect.logWarning("health: the store failed", cause).pipe(Effect.andThen(Effect.fail(unavailable("is not answering"))))
        ),
        Effect.timeoutOrElse({
          duration: storeTimeout,
          orElse: () =>
            Effect.logWarning("health: the store did not answer in time").pipe(
              Effect.andThen(Effect.fail(unavailable(`did not answer within ${Duration.format(storeTimeout)}`)))
            )
        }),
        Effect.as({ status: "ok" as const })
      ))
  })
)
