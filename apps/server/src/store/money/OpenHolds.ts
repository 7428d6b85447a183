/**
 * How many holds are open in the store and what they hold, for `/metrics` (with replicas, each
 * reads the same shared figure).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  /** Holds not expired at `now`: their count and their amount in nano-USD. */
  return (now: number) =>
    sql<{ n: number; nanos: string }>`SELECT CAST(count(*) AS integer) AS n, CAST(COALESCE(SUM(amount_nanos), 0) AS text) AS nanos
      FROM holds WHERE expires_at > ${new Date(now)}`.pipe(
      Effect.map((rows) => ({ count: Number(rows[0]?.n ?? 0), nanos: BigInt(rows[0]?.nanos ?? "0") }))
    )
})
