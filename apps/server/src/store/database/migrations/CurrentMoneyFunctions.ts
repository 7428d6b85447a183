import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as MoneyFunctions from "../../money/MoneyFunctions.ts"

/**
 * The money functions in one place: the functions nothing calls any more go (reserve, settle,
 * record, admit and the batch of them, replaced by spend leases in `0010_spend_leases`). Earlier
 * migrations no longer create functions: every live one is created from its current definition in
 * `MoneyFunctions.ts` once the migrations have run (`Migrations.migrate`).
 */
export const currentMoneyFunctions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // By name alone: each exists in at most one signature, whichever version created it.
  for (const name of MoneyFunctions.retired) yield* sql.unsafe(`DROP FUNCTION IF EXISTS ${name}`)
})
