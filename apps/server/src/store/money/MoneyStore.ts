/**
 * The money store: what the lease book (`LeaseBook`) asks of the database, as operations, not
 * statements. Two implementations, one per dialect: PostgreSQL (`PgMoneyStore`, the PL/pgSQL
 * functions of `MoneyFunctions`: one round trip per grant or flush, across replicas) and SQLite
 * (`SqliteMoneyStore`, the same steps in TypeScript inside one `BEGIN IMMEDIATE` transaction, across
 * the worker processes sharing the file). {@link make} picks the one of the client's dialect.
 *
 * **Details**
 *
 * - Money is `bigint` nano-USD both ways; times are epoch milliseconds from the Effect `Clock` of
 *   the caller (process liveness: the store's clock on PostgreSQL, the layer's `Clock` on SQLite).
 * - Every operation is atomic: a grant checks and takes in one transaction, a flush writes its
 *   whole batch (ledger rows, spend counters, usage, lease amounts) in one transaction, so a
 *   failure leaves nothing half-done (it may have committed: the caller reads back).
 * - The money suites (`test/money`) are this port's conformance tests: they run on both stores.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { MoneyStore } from "./MoneyStorePort.ts"
import * as PgMoneyStore from "./PgMoneyStore.ts"
import * as SqliteMoneyStore from "./SqliteMoneyStore.ts"

export type * from "./MoneyStorePort.ts"

/** The money store of the client's dialect. */
export const make: Effect.Effect<MoneyStore, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.onDialectOrElse({
    sqlite: () => SqliteMoneyStore.make(sql),
    orElse: () => PgMoneyStore.make(sql)
  })
})
