import { Api } from "@switchyard/core/api/Api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SqlClient } from "effect/sql"

export const SystemHandlers = HttpApiBuilder.group(
  Api,
  "system",
  Effect.fn(function*(handlers) {
    const sql = yield* SqlClient.SqlClient
    return handlers.handle("health", () =>
      sql`SELECT 1`.pipe(Effect.orDie, Effect.as({ status: "ok" as const }))
    )
  })
)
