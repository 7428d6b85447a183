import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as MoneyFunctions from "../MoneyFunctions.ts"

/**
 * The money functions in one place: the functions nothing calls any more go (reserve, settle,
 * record, admit and the batch of them, replaced by spend leases in `0010_spend_leases`), and every
 * live one is created from its current definition in `MoneyFunctions.ts`. Earlier migrations no
 * longer create functions: a store migrated from any version gets these definitions here.
 *
 * A later change to a money function is a migration that runs `MoneyFunctions.apply` again.
 */
export const currentMoneyFunctions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // By name alone: each exists in at most one signature, whichever version created it.
  for (const name of MoneyFunctions.retired) yield* sql.unsafe(`DROP FUNCTION IF EXISTS ${name}`)
  yield* MoneyFunctions.apply
})
